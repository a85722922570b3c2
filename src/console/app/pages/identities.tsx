/** Identities: the workspace's owners of keys, searchable; create, edit (meta and rate limits) and delete where allowed. */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { IdentityView, RatelimitInput, RatelimitView } from "../api/routes.ts";
import { DataTable } from "../components/data-table.tsx";
import { ConfirmDialog, Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field, TextArea } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { allows } from "../permissions.ts";

/** Characters of a meta the table shows. */
const META_PREVIEW_CHARS = 200;

export function IdentitiesPage(): JSX.Element {
  const { client, grants } = useSession();
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState<IdentityView | "new" | undefined>();
  const [deleting, setDeleting] = useState<IdentityView | undefined>();
  const [error, setError] = useState<unknown>();
  const may = (action: string) => allows(grants, { resource: "identity", action });
  const remove = async (identity: IdentityView) => {
    setDeleting(undefined);
    try {
      await client.call("identities.deleteIdentity", { identity: identity.id });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  const columns = [
    { header: "External id", cell: (i: IdentityView) => i.externalId },
    { header: "Id", cell: (i: IdentityView) => <code>{i.id}</code> },
    { header: "Meta", cell: (i: IdentityView) => (Object.keys(i.meta).length > 0 ? <code>{metaPreview(i.meta)}</code> : <span class="muted">none</span>) },
    { header: "Rate limits", cell: (i: IdentityView) => i.ratelimits.map((r) => `${r.name}: ${r.limit}/${r.duration} ms`).join(", ") || "—" },
    {
      header: "Actions",
      cell: (i: IdentityView) => (
        <>
          {may("update_identity") && <button type="button" class="secondary" onClick={() => setEditing(i)} aria-label={`Edit identity ${i.externalId}`}>Edit</button>}
          {may("delete_identity") && <button type="button" class="secondary" onClick={() => setDeleting(i)} aria-label={`Delete identity ${i.externalId}`}>Delete</button>}
        </>
      ),
    },
  ];
  return (
    <section>
      <h1>Identities</h1>
      {may("create_identity") && <div class="toolbar"><button type="button" onClick={() => setEditing("new")}>Create identity</button></div>}
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <DataTable caption="Identities" columns={columns} rowKey={(i) => i.id} version={version} searchLabel="Search by id or external id"
        empty="No identities yet." load={(cursor, search) => client.page("identities.listIdentities", { ...(cursor ? { cursor } : {}), ...(search ? { search } : {}) })} />
      {editing && <EditIdentity identity={editing === "new" ? undefined : editing} onClose={() => setEditing(undefined)} onSaved={() => setVersion((v) => v + 1)} />}
      {deleting && (
        <ConfirmDialog title="Delete this identity?" confirmLabel="Delete identity" onCancel={() => setDeleting(undefined)} onConfirm={() => remove(deleting)}
          message={<p>Identity <strong>{deleting.externalId}</strong> and its rate limits are removed; its keys stay, without an owner.</p>} />
      )}
    </section>
  );
}

/** The start of a meta's JSON for a table cell: a meta may be a megabyte, which Edit shows whole. */
function metaPreview(meta: Record<string, unknown>): string {
  const text = JSON.stringify(meta);
  return text.length > META_PREVIEW_CHARS ? `${text.slice(0, META_PREVIEW_CHARS)}…` : text;
}

/** The meta box's text as an object; throws a readable Error when it is not a JSON object. */
function parseMeta(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const value: unknown = JSON.parse(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("Meta must be a JSON object, like {\"plan\": \"pro\"}.");
  return value as Record<string, unknown>;
}

/** The rate-limits box's text as the API's list; the API checks each field and answers a 400 naming it. */
function parseRatelimits(text: string): RatelimitInput[] {
  if (text.trim() === "") return [];
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) throw new Error("Rate limits must be a JSON list, like [{\"name\": \"requests\", \"limit\": 100, \"duration\": 60000}].");
  return value as RatelimitInput[];
}

const ratelimitsText = (limits: readonly RatelimitView[]): string =>
  limits.length === 0 ? "" : JSON.stringify(limits.map(({ name, limit, duration, autoApply }) => ({ name, limit, duration, autoApply })), null, 2);

function EditIdentity(props: { identity: IdentityView | undefined; onClose(): void; onSaved(): void }): JSX.Element {
  const { client } = useSession();
  const { identity } = props;
  const [externalId, setExternalId] = useState("");
  const [meta, setMeta] = useState(identity ? JSON.stringify(identity.meta, null, 2) : "");
  const [ratelimits, setRatelimits] = useState(identity ? ratelimitsText(identity.ratelimits) : "");
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const fields = { meta: parseMeta(meta), ratelimits: parseRatelimits(ratelimits) };
      if (identity) await client.call("identities.updateIdentity", { identity: identity.id, ...fields });
      else await client.call("identities.createIdentity", { externalId: externalId.trim(), ...fields });
      props.onClose();
      props.onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title={identity ? `Edit ${identity.externalId}` : "Create an identity"} onClose={props.onClose}>
      <form onSubmit={submit}>
        {!identity && <Field label="External id" value={externalId} onInput={setExternalId} required autoFocus hint="Your id for the owner: a user, an organisation." />}
        <TextArea label="Meta (JSON)" value={meta} onInput={setMeta} hint="Returned with every verification of the identity's keys." />
        <TextArea label="Rate limits (JSON)" value={ratelimits} onInput={setRatelimits}
          hint="Shared by all the identity's keys: a list of {name, limit, duration in ms, autoApply}; an empty box removes them." />
        <ErrorBanner error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit" disabled={!identity && externalId.trim() === ""}>{identity ? "Save" : "Create"}</button>
        </div>
      </form>
    </Dialog>
  );
}
