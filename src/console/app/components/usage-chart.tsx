/** Verifications over a range by outcome for a scope (workspace, API or key), from the rollups. */
import type { JSX } from "preact";
import { RANGES, toChart, verificationsOverTime, type RangeName, type Scope } from "../analytics.ts";
import { useSession } from "../context.ts";
import { useAsync } from "../use-async.ts";
import { ErrorBanner } from "./error-banner.tsx";
import { TimeChart } from "./time-chart.tsx";

export function UsageChart(props: { title: string; range: RangeName; scope?: Scope }): JSX.Element {
  const { client } = useSession();
  const { keySpaceId, keyId } = props.scope ?? {};
  const chart = useAsync(async () => {
    const rows = await client.call("analytics.getVerifications", { query: verificationsOverTime(props.range, { keySpaceId, keyId }) });
    return toChart(rows, RANGES[props.range].stepMs, RANGES[props.range].buckets);
  }, [props.range, keySpaceId, keyId]);
  if (chart.error) return <ErrorBanner error={chart.error} />;
  if (!chart.data) return <p class="muted">Loading {props.title.toLowerCase()}…</p>;
  if (chart.data.timesMs.length === 0) return <p class="muted" data-testid="usage-empty">{props.title}: no verifications in this range.</p>;
  return <TimeChart title={props.title} timesMs={chart.data.timesMs} series={chart.data.series} />;
}
