/**
 * One API: its keys (search by name, externalId or start; paging; enabled, credits, expiry, last
 * used) and "create key", which shows the new key once.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { keysPage } from "../api/keys.ts";
import type { KeyView } from "../api/routes.ts";
import { lastUsed } from "../analytics.ts";
import { DataTable, type Column } from "../components/data-table.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { useSession } from "../context.ts";
import { formatCredits, formatTime } from "../format.ts";
import { allows } from "../permissions.ts";
import { Link } from "../router.tsx";
import { useAsync } from "../use-async.ts";
import { CreateKey } from "./create-key.tsx";

type Row = KeyView & { lastUsedMs?: number };

export function ApiPage(props: { apiId: string }): JSX.Element {
  const { client, grants, whoami } = useSession();
  const { apiId } = props;
  const [creating, setCreating] = useState(false);
  const [version, setVersion] = useState(0);
  const api = useAsync(async () => {
    const [view, listed] = await Promise.all([client.call("apis.getApi", { apiId }), client.page("apis.listApis", { search: apiId })]);
    return { ...view, keySpaceId: listed.items.find((a) => a.id === apiId)?.keySpaceId };
  }, [apiId]);
  const keySpaceId = api.data?.keySpaceId;
  const showLastUsed = whoami.analytics.recording && whoami.analytics.querying && allows(grants, { resource: "api", id: apiId, action: "read_analytics" }) && keySpaceId !== undefined;
  const load = async (cursor: string | undefined, search: string) => {
    const page = await keysPage(client, apiId, cursor, search);
    if (!showLastUsed || page.items.length === 0) return page;
    const rows = await client.call("analytics.getVerifications", { query: lastUsed(keySpaceId, page.items.map((k) => k.keyId)) });
    const byKey = new Map(rows.map((r) => [String(r.key_id), Number(r.last_used)]));
    return { ...page, items: page.items.map((k): Row => ({ ...k, lastUsedMs: byKey.get(k.keyId) })) };
  };
  const columns: Array<Column<Row>> = [
    { header: "Key", cell: (k) => <Link href={`/console/apis/${apiId}/keys/${k.keyId}`}>{k.name ?? <code>{k.start}…</code>}</Link> },
    { header: "Start", cell: (k) => <code>{k.start}</code> },
    { header: "Owner", cell: (k) => k.identity?.externalId ?? "—" },
    { header: "Enabled", cell: (k) => (k.enabled ? "yes" : "disabled") },
    { header: "Credits", cell: (k) => formatCredits(k.credits) },
    { header: "Expires", cell: (k) => (k.expires === undefined ? "never" : formatTime(k.expires)) },
    ...(showLastUsed ? [{ header: "Last used", cell: (k: Row) => (k.lastUsedMs === undefined ? "—" : formatTime(k.lastUsedMs)) }] : []),
  ];
  if (api.error) return <section><h1>API</h1><ErrorBanner error={api.error} /></section>;
  return (
    <section>
      <p><Link href="/console/apis">APIs</Link> /</p>
      <h1>{api.data?.name ?? apiId}</h1>
      <p class="muted"><code>{apiId}</code>{keySpaceId && <> · key space <code>{keySpaceId}</code></>}</p>
      {allows(grants, { resource: "api", id: apiId, action: "create_key" }) && (
        <div class="toolbar"><button type="button" onClick={() => setCreating(true)}>Create key</button></div>
      )}
      {!showLastUsed && <p class="muted">Last use is read from analytics, which is not available here, so it is not shown.</p>}
      {api.data && (
        <DataTable caption="Keys" columns={columns} rowKey={(k) => k.keyId} version={version} load={load}
          searchLabel="Search by name, owner (externalId) or start" empty="No keys." />
      )}
      {creating && <CreateKey apiId={apiId} onClose={() => setCreating(false)} onCreated={() => setVersion((v) => v + 1)} />}
    </section>
  );
}
