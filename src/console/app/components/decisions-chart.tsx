/** Rate-limit decisions over a range, passed and blocked, of every readable namespace or of one. */
import type { JSX } from "preact";
import { decisionsOverTime, RANGES, toDecisionsChart, type RangeName } from "../analytics.ts";
import { useSession } from "../context.ts";
import { useAsync } from "../use-async.ts";
import { ErrorBanner } from "./error-banner.tsx";
import { TimeChart } from "./time-chart.tsx";

const TITLE = "Rate-limit decisions";

export function DecisionsChart(props: { range: RangeName; namespaceId?: string }): JSX.Element {
  const { client } = useSession();
  const chart = useAsync(async () => {
    const rows = await client.call("analytics.getVerifications", { query: decisionsOverTime(props.range, props.namespaceId) });
    return toDecisionsChart(rows, RANGES[props.range].stepMs, RANGES[props.range].buckets);
  }, [props.range, props.namespaceId]);
  if (chart.error) return <ErrorBanner error={chart.error} />;
  if (!chart.data) return <p class="muted">Loading rate-limit decisions…</p>;
  if (chart.data.timesMs.length === 0) return <p class="muted" data-testid="decisions-empty">{TITLE}: none in this range.</p>;
  return <TimeChart title={TITLE} timesMs={chart.data.timesMs} series={chart.data.series} />;
}
