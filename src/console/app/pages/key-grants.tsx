/**
 * A key's direct permissions and roles, each removable, and a box to add one, shown only to a root
 * key with the rbac grant the API would ask for (a permission name that does not exist yet also
 * needs rbac.*.create_permission; the API's 403 says so).
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { KeyView } from "../api/routes.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { allows } from "../permissions.ts";

export function KeyGrants(props: { apiId: string; keyView: KeyView; onChanged(): void }): JSX.Element {
  const { client } = useSession();
  const { keyId } = props.keyView;
  const [error, setError] = useState<unknown>();
  const change = async (call: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await call();
      props.onChanged();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div>
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <GrantList title="Permissions" noun="permission" items={props.keyView.permissions ?? []} addAction="add_permission_to_key" removeAction="remove_permission_from_key"
        onAdd={(name) => change(() => client.call("keys.addPermissions", { keyId, permissions: [name] }))}
        onRemove={(name) => change(() => client.call("keys.removePermissions", { keyId, permissions: [name] }))} />
      <GrantList title="Roles" noun="role" items={props.keyView.roles ?? []} addAction="add_role_to_key" removeAction="remove_role_from_key"
        onAdd={(name) => change(() => client.call("keys.addRoles", { keyId, roles: [name] }))}
        onRemove={(name) => change(() => client.call("keys.removeRoles", { keyId, roles: [name] }))} />
    </div>
  );
}

interface GrantListProps {
  title: string;
  noun: string;
  items: readonly string[];
  addAction: string;
  removeAction: string;
  onAdd(name: string): void;
  onRemove(name: string): void;
}

function GrantList(props: GrantListProps): JSX.Element {
  const { grants } = useSession();
  const [name, setName] = useState("");
  const mayAdd = allows(grants, { resource: "rbac", action: props.addAction });
  const mayRemove = allows(grants, { resource: "rbac", action: props.removeAction });
  const submit = (e: Event) => {
    e.preventDefault();
    if (name.trim() === "") return;
    props.onAdd(name.trim());
    setName("");
  };
  return (
    <>
      <h2>{props.title}</h2>
      {props.items.length === 0 ? <p class="muted">None.</p> : (
        <ul class="chips" aria-label={props.title}>
          {props.items.map((item) => (
            <li key={item}>
              <code>{item}</code>
              {mayRemove && <button type="button" class="secondary" aria-label={`Remove ${props.noun} ${item}`} onClick={() => props.onRemove(item)}>×</button>}
            </li>
          ))}
        </ul>
      )}
      {mayAdd && (
        <form class="toolbar" onSubmit={submit}>
          <Field label={`Add a ${props.noun}`} value={name} onInput={setName} />
          <button type="submit" disabled={name.trim() === ""}>Add</button>
        </form>
      )}
    </>
  );
}
