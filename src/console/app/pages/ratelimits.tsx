/**
 * Rate limits: the namespaces (those whose overrides the key may read; any name or id can also be
 * opened), one namespace's overrides (list, search, set, delete) and a box to try a limit. The API
 * pages overrides without a search, so a search reads every page (bounded) and filters.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { findNamespace, searchOverrides } from "../api/namespaces.ts";
import type { NamespaceView, OverrideView } from "../api/routes.ts";
import { DataTable } from "../components/data-table.tsx";
import { ConfirmDialog, Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { formatTime } from "../format.ts";
import { allows, allowsSome } from "../permissions.ts";
import { Link, navigate } from "../router.tsx";
import { useAsync } from "../use-async.ts";
import { TryLimit } from "./ratelimit-try.tsx";

const namespaceColumns = [
  { header: "Name", cell: (n: NamespaceView) => <Link href={`/console/ratelimits/${encodeURIComponent(n.name)}`}>{n.name}</Link> },
  { header: "Id", cell: (n: NamespaceView) => <code>{n.id}</code> },
  { header: "Created", cell: (n: NamespaceView) => formatTime(n.createdAt) },
];

export function RatelimitsPage(props: { namespace?: string }): JSX.Element {
  const { client, grants } = useSession();
  const mayList = allowsSome(grants, "ratelimit", "read_override");
  const current = props.namespace;
  // The namespace's id, for the grants a key holds on that namespace alone.
  const opened = useAsync(() => (mayList && current !== undefined ? findNamespace(client, current) : Promise.resolve(undefined)), [mayList, current]);
  const [typed, setTyped] = useState(current ?? "");
  const open = (e: Event) => {
    e.preventDefault();
    if (typed.trim() !== "") navigate(`/console/ratelimits/${encodeURIComponent(typed.trim())}`);
  };
  return (
    <section>
      <h1>Rate limits</h1>
      <h2>Namespaces</h2>
      {mayList
        ? <DataTable caption="Namespaces" columns={namespaceColumns} rowKey={(n) => n.id} searchLabel="Search namespaces by name or id"
            empty="No namespaces yet (a namespace is created on its first limit)."
            load={(cursor, search) => client.page("ratelimit.listNamespaces", { ...(cursor ? { cursor } : {}), ...(search ? { search } : {}) })} />
        : <p class="muted">This key may read no namespace's overrides, so none are listed; open one by name or id.</p>}
      <form class="toolbar" onSubmit={open}>
        <Field label="Namespace (name or id)" value={typed} onInput={setTyped} />
        <button type="submit" class="secondary" disabled={typed.trim() === ""}>Open</button>
      </form>
      {current !== undefined && <Overrides key={current} namespace={current} namespaceId={opened.data?.id} />}
      {allowsSome(grants, "ratelimit", "limit") && <TryLimit namespace={current ?? ""} />}
    </section>
  );
}

function Overrides(props: { namespace: string; namespaceId: string | undefined }): JSX.Element {
  const { client, grants } = useSession();
  const { namespace } = props;
  const [version, setVersion] = useState(0);
  const [setting, setSetting] = useState(false);
  const [deleting, setDeleting] = useState<OverrideView | undefined>();
  const [error, setError] = useState<unknown>();
  const may = (action: string) => allows(grants, { resource: "ratelimit", action, ...(props.namespaceId ? { id: props.namespaceId } : {}) });
  const remove = async (o: OverrideView) => {
    setDeleting(undefined);
    try {
      await client.call("ratelimit.deleteOverride", { namespace, identifier: o.identifier });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  const columns = [
    { header: "Identifier", cell: (o: OverrideView) => <code>{o.identifier}</code> },
    { header: "Limit", cell: (o: OverrideView) => String(o.limit) },
    { header: "Duration (ms)", cell: (o: OverrideView) => String(o.duration) },
    { header: "Id", cell: (o: OverrideView) => <code>{o.overrideId}</code> },
    {
      header: "Actions",
      cell: (o: OverrideView) => (may("delete_override")
        ? <button type="button" class="secondary" onClick={() => setDeleting(o)} aria-label={`Delete override ${o.identifier}`}>Delete</button>
        : null),
    },
  ];
  return (
    <div>
      <h2>Overrides of {namespace}</h2>
      {may("set_override") && <div class="toolbar"><button type="button" onClick={() => setSetting(true)}>Set override</button></div>}
      <ErrorBanner error={error} onDismiss={() => setError(undefined)} />
      <DataTable caption={`Overrides of ${namespace}`} columns={columns} rowKey={(o) => o.overrideId} version={version}
        searchLabel="Search by identifier" empty="No overrides."
        load={(cursor, search) => (search
          ? searchOverrides(client, namespace, search, cursor)
          : client.page("ratelimit.listOverrides", { namespace, ...(cursor ? { cursor } : {}) }))} />
      {setting && <SetOverride namespace={namespace} onClose={() => setSetting(false)} onSaved={() => setVersion((v) => v + 1)} />}
      {deleting && (
        <ConfirmDialog title="Delete this override?" confirmLabel="Delete override" onCancel={() => setDeleting(undefined)} onConfirm={() => remove(deleting)}
          message={<p>Requests of <code>{deleting.identifier}</code> fall back to the limit each request names.</p>} />
      )}
    </div>
  );
}

function SetOverride(props: { namespace: string; onClose(): void; onSaved(): void }): JSX.Element {
  const { client } = useSession();
  const [identifier, setIdentifier] = useState("");
  const [limit, setLimit] = useState("");
  const [duration, setDuration] = useState("60000");
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await client.call("ratelimit.setOverride", { namespace: props.namespace, identifier: identifier.trim(), limit: Number(limit), duration: Number(duration) });
      props.onClose();
      props.onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title="Set an override" onClose={props.onClose}>
      <form onSubmit={submit}>
        <Field label="Identifier" value={identifier} onInput={setIdentifier} required autoFocus hint="`*` matches any run of characters." />
        <Field label="Limit" type="number" value={limit} onInput={setLimit} required hint="0 denies every request." />
        <Field label="Duration (ms)" type="number" value={duration} onInput={setDuration} required />
        <ErrorBanner error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          <button type="submit" disabled={identifier.trim() === "" || limit === ""}>Save</button>
        </div>
      </form>
    </Dialog>
  );
}
