/**
 * What a request names in its first line and Host header, read without `new URL`: a request with
 * no Host (HTTP/1.0, a load balancer's health check) or an odd one has a `request.url` that does
 * not parse, and the error path must answer it all the same.
 * /metrics and the console answer only under a Host that is an IP address, `localhost`, or a name
 * the operator listed (TOLLGATE_ALLOWED_HOSTS): a page served under another name and rebound to
 * this address (DNS rebinding) sends its own name, so it cannot read them from a local browser.
 */
import { isIP } from "node:net";
import { AppError } from "../errors/app-error.ts";

/** The path of a request's URL, without the query string: Bun's URL is absolute, or only the path when the Host is missing. */
export function pathOf(url: string): string {
  const scheme = url.indexOf("://");
  const start = scheme === -1 ? url.indexOf("/") : url.indexOf("/", scheme + 3);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return url.slice(start, query === -1 ? undefined : query);
}

/** The name in a Host header, without its port, lower-cased; undefined when it is not one host. */
function hostName(host: string): string | undefined {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end !== -1 && /^(:\d{1,5})?$/.test(h.slice(end + 1)) ? h.slice(1, end) : undefined;
  }
  if (isIP(h) === 6) return h;
  const port = /:\d{1,5}$/.exec(h);
  const name = port ? h.slice(0, port.index) : h;
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** Whether a Host header names this machine by address, as `localhost`, or by a name in `allowed`. */
export function hostAllowed(host: string | null, allowed: ReadonlySet<string>): boolean {
  const name = host === null ? undefined : hostName(host);
  if (name === undefined || name === "") return false;
  return (isIP(name) !== 0 && !name.includes("%")) || name === "localhost" || allowed.has(name);
}

/** Throws 421 `misdirected_request` unless the request's Host is allowed. */
export function requireAllowedHost(request: Request, allowed: ReadonlySet<string>): void {
  if (!hostAllowed(request.headers.get("host"), allowed)) {
    throw new AppError("misdirected_request", { detail: "This path answers only under an IP address, localhost, or a name in TOLLGATE_ALLOWED_HOSTS." });
  }
}
