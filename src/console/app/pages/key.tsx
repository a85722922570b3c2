/** One key: what it is (owner, credits, expiry, limits, meta, permissions, roles), its own usage, and what may be done to it. */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { KeyView, RatelimitView } from "../api/routes.ts";
import type { RangeName } from "../analytics.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { RangePicker } from "../components/range-picker.tsx";
import { UsageChart } from "../components/usage-chart.tsx";
import { useSession } from "../context.ts";
import { formatCredits, formatTime } from "../format.ts";
import { allows } from "../permissions.ts";
import { Link } from "../router.tsx";
import { useAsync } from "../use-async.ts";
import { KeyActions } from "./key-actions.tsx";
import { KeyGrants } from "./key-grants.tsx";

export function KeyPage(props: { apiId: string; keyId: string }): JSX.Element {
  const { client } = useSession();
  const { apiId, keyId } = props;
  const key = useAsync(() => client.call("keys.getKey", { keyId }), [keyId]);
  // The API's name where the key may read it; its id otherwise.
  const api = useAsync(() => client.call("apis.getApi", { apiId }), [apiId]);
  const back = <p><Link href="/console/apis">APIs</Link> / <Link href={`/console/apis/${apiId}`}>{api.data?.name ?? apiId}</Link> /</p>;
  if (key.error) return <section>{back}<h1>Key</h1><ErrorBanner error={key.error} /></section>;
  if (!key.data) return <section>{back}<p class="muted">Loading…</p></section>;
  const k = key.data;
  return (
    <section>
      {back}
      <h1>{k.name ?? `${k.start}…`}</h1>
      <KeyActions apiId={apiId} keyView={k} onChanged={key.reload} />
      <div class="grid-2">
        <Facts k={k} />
        <div>
          <KeyGrants apiId={apiId} keyView={k} onChanged={key.reload} />
          <Ratelimits title="Rate limits" limits={k.ratelimits ?? []} />
          {k.identity?.ratelimits && k.identity.ratelimits.length > 0 && <Ratelimits title="Rate limits of its owner" limits={k.identity.ratelimits} />}
        </div>
      </div>
      <h2>Meta</h2>
      {k.meta ? <pre class="secret">{JSON.stringify(k.meta, null, 2)}</pre> : <p class="muted">None.</p>}
      <KeyUsage apiId={apiId} keyId={keyId} />
    </section>
  );
}

function Facts(props: { k: KeyView }): JSX.Element {
  const { k } = props;
  const refill = k.credits?.refill;
  return (
    <dl class="facts">
      <dt>Key id</dt><dd><code>{k.keyId}</code></dd>
      <dt>Start</dt><dd><code>{k.start}</code></dd>
      <dt>Status</dt><dd data-testid="key-status">{k.enabled ? "enabled" : "disabled"}</dd>
      <dt>Credits</dt><dd>{formatCredits(k.credits)}{refill && ` (refill ${refill.amount} ${refill.interval}${refill.refillDay ? ` on day ${refill.refillDay}` : ""})`}</dd>
      <dt>Expires</dt><dd>{k.expires === undefined ? "never" : formatTime(k.expires)}</dd>
      <dt>Created</dt><dd>{formatTime(k.createdAt)}</dd>
      {k.updatedAt !== undefined && <><dt>Updated</dt><dd>{formatTime(k.updatedAt)}</dd></>}
      <dt>Owner</dt><dd>{k.identity ? <><strong>{k.identity.externalId}</strong> (<code>{k.identity.id}</code>)</> : "none"}</dd>
      {k.identity?.meta && <><dt>Owner meta</dt><dd><code>{JSON.stringify(k.identity.meta)}</code></dd></>}
    </dl>
  );
}

function Ratelimits(props: { title: string; limits: readonly RatelimitView[] }): JSX.Element {
  return (
    <>
      <h2>{props.title}</h2>
      {props.limits.length === 0 ? <p class="muted">None.</p> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Limit</th><th scope="col">Per</th><th scope="col">Auto-applied</th></tr></thead>
          <tbody>{props.limits.map((r) => (
            <tr key={r.id}><td data-label="Name">{r.name}</td><td data-label="Limit">{r.limit}</td><td data-label="Per">{r.duration / 1000} s</td><td data-label="Auto-applied">{r.autoApply ? "yes" : "no"}</td></tr>
          ))}</tbody>
        </table>
      )}
    </>
  );
}

function KeyUsage(props: { apiId: string; keyId: string }): JSX.Element {
  const { grants, whoami } = useSession();
  const [range, setRange] = useState<RangeName>("24h");
  const allowed = whoami.analytics.recording && whoami.analytics.querying && allows(grants, { resource: "api", id: props.apiId, action: "read_analytics" });
  return (
    <>
      <h2>Usage</h2>
      {allowed ? (
        <>
          <RangePicker value={range} onChange={setRange} />
          <UsageChart title="This key's verifications by outcome" range={range} scope={{ keyId: props.keyId }} />
        </>
      ) : <p class="muted">Analytics is not available to this key or workspace (see the overview).</p>}
    </>
  );
}
