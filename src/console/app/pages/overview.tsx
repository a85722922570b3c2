/**
 * The overview: verifications over 24 h / 7 d / 30 d by outcome, for the workspace or one API; the
 * totals per API; the busiest keys; rate-limit decisions over the same range (overview-decisions.tsx).
 * Where analytics is off, or the key may not read it, the page says how to change that instead.
 * Last, the workspace's use of its quotas (overview-quotas.tsx).
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { allApis } from "../api/apis.ts";
import type { ApiListItem } from "../api/routes.ts";
import { busiestKeys, totalsBy, verificationsByApi, type RangeName } from "../analytics.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { RangePicker } from "../components/range-picker.tsx";
import { UsageChart } from "../components/usage-chart.tsx";
import { useSession } from "../context.ts";
import { allows, allowsSome } from "../permissions.ts";
import { Link } from "../router.tsx";
import { useAsync } from "../use-async.ts";
import { RatelimitDecisions } from "./overview-decisions.tsx";
import { Quotas } from "./overview-quotas.tsx";

export function Overview(): JSX.Element {
  const { whoami, grants, client } = useSession();
  const [range, setRange] = useState<RangeName>("24h");
  const [keySpaceId, setKeySpaceId] = useState("");
  const apis = useAsync(async () => (allowsSome(grants, "api", "read_api") ? allApis(client) : []), []);
  const analyticsOn = whoami.analytics.recording && whoami.analytics.querying;
  const canQuery = analyticsOn && allowsSome(grants, "api", "read_analytics");
  return (
    <section>
      <h1>Overview</h1>
      <p>Workspace <strong>{whoami.workspace.name}</strong> (<code>{whoami.workspace.id}</code>), root key <strong>{whoami.name || whoami.rootKeyId}</strong>.</p>
      <AnalyticsStatus />
      {analyticsOn && (canQuery || allowsSome(grants, "ratelimit", "read_analytics")) && <RangePicker value={range} onChange={setRange} />}
      {canQuery && (
        <>
          <div class="field narrow">
            <label for="overview-api">API</label>
            <select id="overview-api" value={keySpaceId} onChange={(e) => setKeySpaceId(e.currentTarget.value)}>
              <option value="">All APIs</option>
              {apis.data?.map((a) => <option key={a.id} value={a.keySpaceId}>{a.name}</option>)}
            </select>
          </div>
          <UsageChart title="Verifications by outcome" range={range} scope={keySpaceId ? { keySpaceId } : {}} />
          <div class="grid-2">
            <PerApi range={range} apis={apis.data ?? []} />
            <BusiestKeys range={range} apis={apis.data ?? []} />
          </div>
        </>
      )}
      <RatelimitDecisions range={range} />
      <Quotas />
    </section>
  );
}

function PerApi(props: { range: RangeName; apis: readonly ApiListItem[] }): JSX.Element {
  const { client } = useSession();
  const totals = useAsync(async () => totalsBy(await client.call("analytics.getVerifications", { query: verificationsByApi(props.range) }), "key_space_id"), [props.range]);
  const nameOf = (ks: string) => props.apis.find((a) => a.keySpaceId === ks)?.name ?? ks;
  const rows = [...(totals.data ?? new Map<string, Record<string, number>>())];
  return (
    <div>
      <h2>Per API</h2>
      <ErrorBanner error={totals.error} />
      <table>
        <thead><tr><th scope="col">API</th><th scope="col">Verifications</th><th scope="col">Valid</th><th scope="col">Refused</th></tr></thead>
        <tbody>
          {rows.map(([ks, byOutcome]) => {
            const all = Object.values(byOutcome).reduce((s, n) => s + n, 0);
            return <tr key={ks}><td data-label="API">{nameOf(ks)}</td><td data-label="Verifications">{all}</td><td data-label="Valid">{byOutcome.VALID ?? 0}</td><td data-label="Refused">{all - (byOutcome.VALID ?? 0)}</td></tr>;
          })}
          {totals.data && rows.length === 0 && <tr><td colSpan={4} class="muted">No verifications in this range.</td></tr>}
        </tbody>
      </table>
    </div>
  );
}

function BusiestKeys(props: { range: RangeName; apis: readonly ApiListItem[] }): JSX.Element {
  const { client, grants } = useSession();
  const keys = useAsync(() => client.call("analytics.getVerifications", { query: busiestKeys(props.range) }), [props.range]);
  return (
    <div>
      <h2>Busiest keys</h2>
      <ErrorBanner error={keys.error} />
      <table>
        <thead><tr><th scope="col">Key</th><th scope="col">API</th><th scope="col">Verifications</th></tr></thead>
        <tbody>
          {keys.data?.map((r) => {
            const api = props.apis.find((a) => a.keySpaceId === r.key_space_id);
            const keyId = String(r.key_id);
            const link = api && allows(grants, { resource: "api", id: api.id, action: "read_key" });
            return (
              <tr key={keyId}>
                <td data-label="Key">{link ? <Link href={`/console/apis/${api.id}/keys/${keyId}`}><code>{keyId}</code></Link> : <code>{keyId}</code>}</td>
                <td data-label="API">{api?.name ?? String(r.key_space_id)}</td>
                <td data-label="Verifications">{Number(r.total)}</td>
              </tr>
            );
          })}
          {keys.data?.length === 0 && <tr><td colSpan={3} class="muted">No verifications in this range.</td></tr>}
        </tbody>
      </table>
    </div>
  );
}

/** Says how to turn analytics on where it is off, or which grant the key lacks; nothing when all is well. */
export function AnalyticsStatus(): JSX.Element | null {
  const { whoami, grants } = useSession();
  const { analytics, workspace } = whoami;
  const mayRead = allowsSome(grants, "api", "read_analytics");
  if (analytics.recording && analytics.querying && mayRead) return null;
  return (
    <div class="notice" role="status">
      <h2>{analytics.recording && analytics.querying ? "Analytics is not available to this key" : "Analytics is off"}</h2>
      {!analytics.recording && <p>This tollgate does not record verifications. Start it with <code>TOLLGATE_ANALYTICS=on</code> (the default).</p>}
      {!analytics.querying && <p>This workspace has not opted in to analytics queries. Run <code>tollgate workspace update {workspace.name} --analytics on</code>.</p>}
      {!mayRead && <p>This root key may not read analytics: it needs <code>api.*.read_analytics</code> (or <code>api.&lt;apiId&gt;.read_analytics</code>).</p>}
    </div>
  );
}
