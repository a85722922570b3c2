/**
 * What may be done to a key, each shown only to a root key allowed it: enable/disable and set
 * credits (update_key), reroll (create_key), delete (delete_key). Reroll and delete ask first.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { KeyView } from "../api/routes.ts";
import { ConfirmDialog, Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { allows } from "../permissions.ts";
import { navigate } from "../router.tsx";
import { ShownOnce } from "./create-key.tsx";

type Open = "credits" | "reroll" | "delete" | undefined;

export function KeyActions(props: { apiId: string; keyView: KeyView; onChanged(): void }): JSX.Element | null {
  const { client, grants } = useSession();
  const { apiId, keyView: k } = props;
  const [open, setOpen] = useState<Open>();
  const [error, setError] = useState<unknown>();
  const [rerolled, setRerolled] = useState<{ keyId: string; key: string } | undefined>();
  const may = (action: string) => allows(grants, { resource: "api", id: apiId, action });
  const run = async (action: () => Promise<unknown>, after: () => void = props.onChanged) => {
    setOpen(undefined);
    setError(undefined);
    try {
      await action();
      after();
    } catch (e) {
      setError(e);
    }
  };
  if (!may("update_key") && !may("create_key") && !may("delete_key")) return null;
  return (
    <div>
      <div class="toolbar" role="group" aria-label="Key actions">
        {may("update_key") && (
          <button type="button" class="secondary" onClick={() => run(() => client.call("keys.updateKey", { keyId: k.keyId, enabled: !k.enabled }))}>
            {k.enabled ? "Disable" : "Enable"}
          </button>
        )}
        {may("update_key") && <button type="button" class="secondary" onClick={() => setOpen("credits")}>Set credits</button>}
        {may("create_key") && <button type="button" class="secondary" onClick={() => setOpen("reroll")}>Reroll</button>}
        {may("delete_key") && <button type="button" class="danger" onClick={() => setOpen("delete")}>Delete</button>}
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      {open === "credits" && (
        <SetCredits current={k.credits?.remaining ?? null} onClose={() => setOpen(undefined)}
          onSave={(value) => run(() => client.call("keys.updateCredits", { keyId: k.keyId, operation: "set", value }))} />
      )}
      {open === "reroll" && (
        <ConfirmDialog title="Reroll this key?" confirmLabel="Reroll" onCancel={() => setOpen(undefined)}
          message={<p>A new key replaces this one, with the same settings. The current key stops working now.</p>}
          onConfirm={() => run(async () => setRerolled(await client.call("keys.rerollKey", { keyId: k.keyId, expiration: 0 })), () => undefined)} />
      )}
      {open === "delete" && (
        <ConfirmDialog title="Delete this key?" confirmLabel="Delete key" onCancel={() => setOpen(undefined)}
          message={<p>The key <code>{k.start}…</code> stops working at once; this cannot be undone.</p>}
          onConfirm={() => run(() => client.call("keys.deleteKey", { keyId: k.keyId }), () => navigate(`/console/apis/${apiId}`))} />
      )}
      {rerolled && (
        <ShownOnce title="Key rerolled" created={rerolled} onClose={() => navigate(`/console/apis/${apiId}/keys/${rerolled.keyId}`)} />
      )}
    </div>
  );
}

function SetCredits(props: { current: number | null; onClose(): void; onSave(value: number | null): void }): JSX.Element {
  const [value, setValue] = useState(props.current === null ? "" : String(props.current));
  const submit = (e: Event) => {
    e.preventDefault();
    props.onSave(value.trim() === "" ? null : Number(value));
  };
  return (
    <Dialog title="Set credits" onClose={props.onClose}>
      <form onSubmit={submit}>
        <Field label="Remaining credits" type="number" value={value} onInput={setValue} autoFocus hint="Empty makes the key unlimited." />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit">Save</button>
        </div>
      </form>
    </Dialog>
  );
}
