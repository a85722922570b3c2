/**
 * Routing under /console/…: the path is the state (deep links and the back button work), changed
 * with the History API; links stay real <a href> so they work by keyboard and open in a new tab.
 */
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

export const CONSOLE_BASE = "/console";

export function navigate(path: string): void {
  if (location.pathname + location.search === path) return;
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current path and query, re-rendering on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [current, setCurrent] = useState(() => location.pathname + location.search);
  useEffect(() => {
    const onChange = () => setCurrent(location.pathname + location.search);
    addEventListener("popstate", onChange);
    return () => removeEventListener("popstate", onChange);
  }, []);
  const url = new URL(current, location.origin);
  return { path: url.pathname, query: url.searchParams };
}

/** `pattern` like `/console/apis/:apiId`; the named segments when `path` matches, else undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(":")) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return undefined;
  }
  return params;
}

/** An in-app link: a plain click navigates without reloading; modified clicks behave as usual. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; "aria-current"?: "page" }): JSX.Element {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return <a href={props.href} class={props.class} aria-current={props["aria-current"]} onClick={onClick}>{props.children}</a>;
}
