/**
 * Permissions: list and search, create and delete where allowed. A permission has no edit: the API
 * has no operation that changes one (a role's permissions are edited on the roles page).
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { PermissionView } from "../api/routes.ts";
import { DataTable } from "../components/data-table.tsx";
import { ConfirmDialog, Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { allows } from "../permissions.ts";

export function PermissionsPage(): JSX.Element {
  const { client, grants } = useSession();
  const [version, setVersion] = useState(0);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<PermissionView | undefined>();
  const [error, setError] = useState<unknown>();
  const may = (action: string) => allows(grants, { resource: "rbac", action });
  const remove = async (p: PermissionView) => {
    setDeleting(undefined);
    try {
      await client.call("permissions.deletePermission", { permission: p.id });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  const columns = [
    { header: "Slug", cell: (p: PermissionView) => <code>{p.slug}</code> },
    { header: "Name", cell: (p: PermissionView) => p.name },
    { header: "Description", cell: (p: PermissionView) => p.description ?? "—" },
    { header: "Id", cell: (p: PermissionView) => <code>{p.id}</code> },
    {
      header: "Actions",
      cell: (p: PermissionView) => (may("delete_permission")
        ? <button type="button" class="secondary" onClick={() => setDeleting(p)} aria-label={`Delete permission ${p.slug}`}>Delete</button>
        : null),
    },
  ];
  return (
    <section>
      <h1>Permissions</h1>
      {may("create_permission") && <div class="toolbar"><button type="button" onClick={() => setCreating(true)}>Create permission</button></div>}
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <DataTable caption="Permissions" columns={columns} rowKey={(p) => p.id} version={version} searchLabel="Search by id, name, slug or description"
        empty="No permissions yet." load={(cursor, search) => client.page("permissions.listPermissions", { ...(cursor ? { cursor } : {}), ...(search ? { search } : {}) })} />
      {creating && <CreatePermission onClose={() => setCreating(false)} onSaved={() => setVersion((v) => v + 1)} />}
      {deleting && (
        <ConfirmDialog title="Delete this permission?" confirmLabel="Delete permission" onCancel={() => setDeleting(undefined)} onConfirm={() => remove(deleting)}
          message={<p>Permission <code>{deleting.slug}</code> is taken from every key and role that holds it.</p>} />
      )}
    </section>
  );
}

function CreatePermission(props: { onClose(): void; onSaved(): void }): JSX.Element {
  const { client } = useSession();
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const trimmed = description.trim();
      await client.call("permissions.createPermission", { slug: slug.trim(), name: name.trim() || slug.trim(), ...(trimmed ? { description: trimmed } : {}) });
      props.onClose();
      props.onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title="Create a permission" onClose={props.onClose}>
      <form onSubmit={submit}>
        <Field label="Slug" value={slug} onInput={setSlug} required autoFocus hint="Letters, digits and _ : - . * (what keys.verifyKey checks)." />
        <Field label="Name" value={name} onInput={setName} hint="Defaults to the slug." />
        <Field label="Description" value={description} onInput={setDescription} />
        <ErrorBanner error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit" disabled={slug.trim() === ""}>Create</button>
        </div>
      </form>
    </Dialog>
  );
}
