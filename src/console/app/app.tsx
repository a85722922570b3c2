/**
 * The console's shell: sign-in until a root key checks out, then the header (workspace, sign-out),
 * the navigation and the page the path names. Reloading the tab keeps the session (sessionStorage);
 * a key that stops working (revoked, disabled) sends the user back to sign-in with the reason.
 */
import type { JSX } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiClient, ApiError } from "./api/client.ts";
import type { Whoami } from "./api/routes.ts";
import { SessionContext, type Session } from "./context.ts";
import { grantsOf } from "./permissions.ts";
import { CONSOLE_BASE, Link, match, navigate, useLocation } from "./router.tsx";
import { forgetRootKey, storedRootKey, storeRootKey } from "./session.ts";
import { SignIn } from "./pages/sign-in.tsx";
import { PAGES, navEntries } from "./pages.tsx";

export function App(): JSX.Element {
  const [state, setState] = useState<{ client: ApiClient; whoami: Whoami } | "checking" | undefined>(() => (storedRootKey() ? "checking" : undefined));
  const [signInError, setSignInError] = useState<unknown>();
  const signIn = async (client: ApiClient, rootKey: string) => {
    const whoami = await client.call("rootKeys.whoami", {});
    storeRootKey(rootKey);
    setState({ client, whoami });
  };
  useEffect(() => {
    const rootKey = storedRootKey();
    if (state !== "checking" || rootKey === undefined) return;
    signIn(new ApiClient(rootKey), rootKey).catch((error: unknown) => {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) forgetRootKey();
      setSignInError(error);
      setState(undefined);
    });
  }, []);
  const session = useMemo<Session | undefined>(() => {
    if (state === undefined || state === "checking") return undefined;
    return {
      ...state,
      grants: grantsOf(state.whoami.permissions),
      signOut: () => {
        forgetRootKey();
        setSignInError(undefined);
        setState(undefined);
        navigate(CONSOLE_BASE);
      },
    };
  }, [state]);
  if (state === "checking") return <main class="sign-in"><p>Signing in…</p></main>;
  if (!session) return <SignIn onSignedIn={signIn} error={signInError} />;
  return <SessionContext.Provider value={session}><Shell session={session} /></SessionContext.Provider>;
}

function Shell(props: { session: Session }): JSX.Element {
  const { path } = useLocation();
  const { whoami, grants, signOut } = props.session;
  const here = path === "/" ? CONSOLE_BASE : path.replace(/\/+$/, "") || CONSOLE_BASE;
  const page = PAGES.map((p) => ({ p, params: match(p.pattern, here) })).find((m) => m.params !== undefined);
  useEffect(() => document.getElementById("main")?.focus({ preventScroll: true }), [here]);
  return (
    <div class="shell">
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <span class="brand">tollgate</span>
        <span class="who" title={`Root key ${whoami.rootKeyId}`}>{whoami.workspace.name} · {whoami.name || whoami.rootKeyId}</span>
        <button type="button" class="secondary" onClick={signOut}>Sign out</button>
      </header>
      <nav aria-label="Console">
        <ul>
          {navEntries(grants).map((p) => {
            const current = here === p.pattern || (p.pattern !== CONSOLE_BASE && here.startsWith(`${p.pattern}/`));
            return <li key={p.pattern}><Link href={p.pattern} aria-current={current ? "page" : undefined}>{p.nav}</Link></li>;
          })}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {page ? page.p.render(page.params!) : <NotFound path={here} />}
      </main>
    </div>
  );
}

function NotFound(props: { path: string }): JSX.Element {
  return <section><h1>Not found</h1><p>The console has no page at <code>{props.path}</code>.</p><Link href={CONSOLE_BASE}>Go to the overview</Link></section>;
}
