/**
 * Roles: list and search, create, edit (its permissions, as one comma-separated set that replaces
 * the old one) and delete where allowed. An edit needs both add_ and remove_permission_from_role,
 * as the API's setRolePermissions does.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { RoleView } from "../api/routes.ts";
import { DataTable } from "../components/data-table.tsx";
import { ConfirmDialog, Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { allows, allowsAll } from "../permissions.ts";

const slugsOf = (role: RoleView | undefined) => (role?.permissions ?? []).map((p) => p.slug);
const parseSlugs = (text: string) => [...new Set(text.split(",").map((s) => s.trim()).filter((s) => s !== ""))];

export function RolesPage(): JSX.Element {
  const { client, grants } = useSession();
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState<RoleView | "new" | undefined>();
  const [deleting, setDeleting] = useState<RoleView | undefined>();
  const [error, setError] = useState<unknown>();
  const may = (action: string) => allows(grants, { resource: "rbac", action });
  const mayEdit = allowsAll(grants, ["add_permission_to_role", "remove_permission_from_role"].map((action) => ({ resource: "rbac" as const, action })));
  const remove = async (role: RoleView) => {
    setDeleting(undefined);
    try {
      await client.call("permissions.deleteRole", { role: role.id });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  const columns = [
    { header: "Name", cell: (r: RoleView) => r.name },
    { header: "Permissions", cell: (r: RoleView) => (slugsOf(r).length > 0 ? <ul class="chips">{slugsOf(r).map((s) => <li key={s}><code>{s}</code></li>)}</ul> : "—") },
    { header: "Description", cell: (r: RoleView) => r.description ?? "—" },
    { header: "Id", cell: (r: RoleView) => <code>{r.id}</code> },
    {
      header: "Actions",
      cell: (r: RoleView) => (
        <>
          {mayEdit && <button type="button" class="secondary" onClick={() => setEditing(r)} aria-label={`Edit role ${r.name}`}>Edit</button>}
          {may("delete_role") && <button type="button" class="secondary" onClick={() => setDeleting(r)} aria-label={`Delete role ${r.name}`}>Delete</button>}
        </>
      ),
    },
  ];
  return (
    <section>
      <h1>Roles</h1>
      {may("create_role") && <div class="toolbar"><button type="button" onClick={() => setEditing("new")}>Create role</button></div>}
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <DataTable caption="Roles" columns={columns} rowKey={(r) => r.id} version={version} searchLabel="Search by id, name or description"
        empty="No roles yet." load={(cursor, search) => client.page("permissions.listRoles", { ...(cursor ? { cursor } : {}), ...(search ? { search } : {}) })} />
      {editing && <EditRole role={editing === "new" ? undefined : editing} onClose={() => setEditing(undefined)} onSaved={() => setVersion((v) => v + 1)} />}
      {deleting && (
        <ConfirmDialog title="Delete this role?" confirmLabel="Delete role" onCancel={() => setDeleting(undefined)} onConfirm={() => remove(deleting)}
          message={<p>Role <strong>{deleting.name}</strong> is taken from every key that holds it; its permissions stay.</p>} />
      )}
    </section>
  );
}

function EditRole(props: { role: RoleView | undefined; onClose(): void; onSaved(): void }): JSX.Element {
  const { client } = useSession();
  const { role } = props;
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [permissions, setPermissions] = useState(slugsOf(role).join(", "));
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const slugs = parseSlugs(permissions);
      if (role) await client.call("permissions.setRolePermissions", { role: role.id, permissions: slugs });
      else {
        const trimmed = description.trim();
        await client.call("permissions.createRole", { name: name.trim(), ...(trimmed ? { description: trimmed } : {}), ...(slugs.length > 0 ? { permissions: slugs } : {}) });
      }
      props.onClose();
      props.onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title={role ? `Edit ${role.name}` : "Create a role"} onClose={props.onClose}>
      <form onSubmit={submit}>
        {!role && <Field label="Name" value={name} onInput={setName} required autoFocus />}
        {!role && <Field label="Description" value={description} onInput={setDescription} />}
        <Field label="Permissions" value={permissions} onInput={setPermissions} autoFocus={role !== undefined}
          hint="Permission slugs, separated by commas; missing ones are created." />
        <ErrorBanner error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit" disabled={!role && name.trim() === ""}>{role ? "Save" : "Create"}</button>
        </div>
      </form>
    </Dialog>
  );
}
