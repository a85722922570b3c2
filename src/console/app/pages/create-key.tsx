/**
 * "Create key": name, owner, credits and expiry; the new key is then shown once, with a copy
 * button. It is kept nowhere: closing the dialog forgets it.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { CopyButton } from "../components/copy-button.tsx";
import { Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";

export function CreateKey(props: { apiId: string; onClose(): void; onCreated(): void }): JSX.Element {
  const { client } = useSession();
  const [name, setName] = useState("");
  const [externalId, setExternalId] = useState("");
  const [credits, setCredits] = useState("");
  const [expires, setExpires] = useState("");
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<{ keyId: string; key: string } | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const result = await client.call("keys.createKey", {
        apiId: props.apiId,
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(externalId.trim() ? { externalId: externalId.trim() } : {}),
        ...(credits.trim() ? { credits: { remaining: Number(credits) } } : {}),
        // datetime-local has no zone; the console writes and reads times in UTC.
        ...(expires ? { expires: Date.parse(`${expires}Z`) } : {}),
      });
      setCreated(result);
      props.onCreated();
    } catch (err) {
      setError(err);
    }
  };
  if (created) return <ShownOnce title="Key created" created={created} onClose={props.onClose} />;
  return (
    <Dialog title="Create a key" onClose={props.onClose}>
      <form onSubmit={submit}>
        <Field label="Name" value={name} onInput={setName} autoFocus hint="Optional; shown in listings." />
        <Field label="Owner (externalId)" value={externalId} onInput={setExternalId} hint="Optional; links the key to an identity, created if missing." />
        <Field label="Credits" type="number" value={credits} onInput={setCredits} hint="Optional; empty means unlimited." />
        <Field label="Expires (UTC)" type="datetime-local" value={expires} onInput={setExpires} hint="Optional; empty means never." />
        <ErrorBanner error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit">Create key</button>
        </div>
      </form>
    </Dialog>
  );
}

/** A new key's plaintext, shown this once. */
export function ShownOnce(props: { title: string; created: { keyId: string; key: string }; onClose(): void }): JSX.Element {
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <p>Copy the key now: it is shown only this once and tollgate keeps only its hash.</p>
      <code class="secret" data-testid="new-key">{props.created.key}</code>
      <p class="muted">Key id <code>{props.created.keyId}</code></p>
      <div class="actions">
        <CopyButton text={props.created.key} label="Copy key" />
        <button type="button" onClick={props.onClose}>Done</button>
      </div>
    </Dialog>
  );
}
