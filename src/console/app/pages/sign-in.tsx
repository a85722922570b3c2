/**
 * Sign-in: a root key pasted once. It is checked with rootKeys.whoami and only then kept (in this
 * tab's sessionStorage); a key the API refuses shows the API's own reason.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { ApiClient, ApiError } from "../api/client.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";

export function SignIn(props: { onSignedIn(client: ApiClient, rootKey: string): Promise<void>; error?: unknown }): JSX.Element {
  const [rootKey, setRootKey] = useState("");
  const [error, setError] = useState<unknown>(props.error);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await props.onSignedIn(new ApiClient(rootKey.trim()), rootKey.trim());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>tollgate</h1>
      <form onSubmit={submit}>
        <Field label="Root key" type="password" name="rootKey" value={rootKey} onInput={setRootKey} required autoFocus
          hint="Kept in this browser tab only, until you sign out or close the tab. The console can do exactly what this key may." />
        <button type="submit" disabled={busy || rootKey.trim() === ""}>Sign in</button>
      </form>
      {error !== undefined && <ErrorBanner error={explain(error)} />}
    </main>
  );
}

/** A refused key gets a sentence before the API's words. */
function explain(error: unknown): unknown {
  if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403)) return error;
  const lead = error.status === 401 ? "This root key is not known to this tollgate." : "This root key may not be used.";
  return new ApiError(error.status, error.title, `${lead} ${error.detail}`, error.type, error.requestId, error.fieldErrors);
}
