/** An API failure in the server's own words: title, status, detail, field errors and the request id to quote. */
import type { JSX } from "preact";
import { ApiError } from "../api/client.ts";

export function ErrorBanner(props: { error: unknown; onDismiss?: () => void }): JSX.Element | null {
  const { error } = props;
  if (error === undefined || error === null) return null;
  const api = error instanceof ApiError ? error : undefined;
  return (
    <div class="error-banner" role="alert">
      <strong>{api ? `${api.title} (${api.status === 0 ? "no answer" : api.status})` : "Something went wrong"}</strong>
      <p>{api ? api.detail : String(error)}</p>
      {api && api.fieldErrors.length > 0 && (
        <ul>{api.fieldErrors.map((f) => <li key={f.location}><code>{f.location}</code>: {f.message}</li>)}</ul>
      )}
      {api?.requestId && <p class="muted">Request id <code>{api.requestId}</code></p>}
      {props.onDismiss && <button type="button" class="secondary" onClick={props.onDismiss}>Dismiss</button>}
    </div>
  );
}
