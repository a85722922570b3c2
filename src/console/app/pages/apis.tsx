/** The APIs the key may read, searchable by name or id, with "create API" and "delete API" where allowed. */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { ApiListItem } from "../api/routes.ts";
import { DataTable } from "../components/data-table.tsx";
import { ConfirmDialog, Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { allows } from "../permissions.ts";
import { Link, navigate } from "../router.tsx";

export function ApisPage(): JSX.Element {
  const { client, grants } = useSession();
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ApiListItem | undefined>();
  const [error, setError] = useState<unknown>();
  const remove = async (api: ApiListItem) => {
    setDeleting(undefined);
    try {
      await client.call("apis.deleteApi", { apiId: api.id });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  const columns = [
    { header: "Name", cell: (a: ApiListItem) => <Link href={`/console/apis/${a.id}`}>{a.name}</Link> },
    { header: "Id", cell: (a: ApiListItem) => <code>{a.id}</code> },
    {
      header: "Actions",
      cell: (a: ApiListItem) => (allows(grants, { resource: "api", id: a.id, action: "delete_api" })
        ? <button type="button" class="secondary" onClick={() => setDeleting(a)} aria-label={`Delete API ${a.name}`}>Delete</button>
        : null),
    },
  ];
  return (
    <section>
      <h1>APIs</h1>
      {allows(grants, { resource: "api", action: "create_api" }) && (
        <div class="toolbar"><button type="button" onClick={() => setCreating(true)}>Create API</button></div>
      )}
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <DataTable caption="APIs" columns={columns} rowKey={(a) => a.id} version={version} searchLabel="Search by name or id"
        empty="No APIs yet." load={(cursor, search) => client.page("apis.listApis", { ...(cursor ? { cursor } : {}), ...(search ? { search } : {}) })} />
      {creating && <CreateApi onClose={() => setCreating(false)} />}
      {deleting && (
        <ConfirmDialog title="Delete this API?" confirmLabel="Delete API" onCancel={() => setDeleting(undefined)} onConfirm={() => remove(deleting)}
          message={<p>API <strong>{deleting.name}</strong> and all its keys stop working: every key of it verifies as <code>NOT_FOUND</code>.</p>} />
      )}
    </section>
  );
}

function CreateApi(props: { onClose(): void }): JSX.Element {
  const { client } = useSession();
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const { apiId } = await client.call("apis.createApi", { name: name.trim() });
      props.onClose();
      navigate(`/console/apis/${apiId}`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title="Create an API" onClose={props.onClose}>
      <form onSubmit={submit}>
        <Field label="Name" value={name} onInput={setName} required autoFocus />
        <ErrorBanner error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit" disabled={name.trim() === ""}>Create</button>
        </div>
      </form>
    </Dialog>
  );
}
