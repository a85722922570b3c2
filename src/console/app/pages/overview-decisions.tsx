/**
 * The overview's rate-limit decisions (ratelimit.limit / multiLimit on namespaces) over the chosen
 * range, of every namespace the key may read or of one. The namespace names come from
 * ratelimit.listNamespaces, which lists only to keys that may read overrides; a key without that
 * still sees the chart of all it may read.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { allNamespaces } from "../api/namespaces.ts";
import type { RangeName } from "../analytics.ts";
import { DecisionsChart } from "../components/decisions-chart.tsx";
import { useSession } from "../context.ts";
import { allowsSome } from "../permissions.ts";
import { useAsync } from "../use-async.ts";

export function RatelimitDecisions(props: { range: RangeName }): JSX.Element {
  const { whoami, grants, client } = useSession();
  const [namespaceId, setNamespaceId] = useState("");
  const { recording, querying } = whoami.analytics;
  const mayRead = allowsSome(grants, "ratelimit", "read_analytics");
  const canQuery = recording && querying && mayRead;
  const namespaces = useAsync(async () => (canQuery && allowsSome(grants, "ratelimit", "read_override") ? allNamespaces(client) : []), [canQuery]);
  return (
    <>
      <h2>Rate-limit decisions</h2>
      <p>
        Decisions of <code>ratelimit.limit</code> and <code>multiLimit</code> on namespaces. Verifications refused by a key's own
        rate limit are counted above as <code>RATE_LIMITED</code>.
      </p>
      {canQuery && (
        <>
          <div class="field narrow">
            <label for="overview-namespace">Namespace</label>
            <select id="overview-namespace" value={namespaceId} onChange={(e) => setNamespaceId(e.currentTarget.value)}>
              <option value="">All namespaces</option>
              {namespaces.data?.map((n) => <option key={n.id} value={n.id}>{n.name}</option>)}
            </select>
          </div>
          <DecisionsChart range={props.range} {...(namespaceId ? { namespaceId } : {})} />
        </>
      )}
      {!(recording && querying) && <p class="muted">Analytics is off: see above for how to turn it on.</p>}
      {recording && querying && !mayRead && (
        <p class="muted" role="status">
          This root key may not read rate-limit analytics: it needs <code>ratelimit.*.read_analytics</code> (or
          <code> ratelimit.&lt;namespaceId&gt;.read_analytics</code>).
        </p>
      )}
    </>
  );
}
