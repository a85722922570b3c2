/** `POST /v2/analytics.getVerifications`: query verification analytics with SQL. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { ErrorCode } from "../../../errors/catalogue.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";

/** The dialect, for the API reference: what a caller can write and what it gets. */
const DESCRIPTION = `Runs one SELECT over the caller's verification analytics and answers its rows.

Needs the workspace's analytics opt-in (\`tollgate workspace update <workspace> --analytics on\`, else 412) and
\`api.*.read_analytics\`, or \`api.<apiId>.read_analytics\` for the rows of those APIs only. Rows of other
workspaces and APIs are never visible; the query needs no filter for them. The rate-limit tables need
\`ratelimit.*.read_analytics\`, or \`ratelimit.<namespaceId>.read_analytics\` for those namespaces' rows only; a
query that reads both kinds of table needs both (403 naming the one missing).

**Tables.** \`key_verifications_v1\`: one row per verification (\`request_id, time, workspace_id, key_space_id,
identity_id, external_id, key_id, region, source, outcome, tags, spent_credits, latency\`).
\`key_verifications_per_minute_v1\`, \`_per_hour_v1\`, \`_per_day_v1\`, \`_per_month_v1\`: counts per UTC bucket,
key, identity, outcome and tag set (\`time, workspace_id, key_space_id, identity_id, external_id, key_id, source,
outcome, tags, count, spent_credits, latency_avg\`). \`time\` is Unix ms (a bucket's start in the rollups),
\`outcome\` the verification code (\`VALID\`, \`RATE_LIMITED\`, \`USAGE_EXCEEDED\`, …), \`tags\` a JSON array.
\`ratelimits_per_minute_v1\`, \`_per_hour_v1\`, \`_per_day_v1\`, \`_per_month_v1\` (a tollgate addition): the decisions of
\`ratelimit.limit\` and \`multiLimit\` per UTC bucket and namespace (\`time, workspace_id, namespace_id, passed, blocked,
total\`), written about one flush interval late; nothing per identifier.

**Dialect** (ClickHouse's, as upstream documents it): \`count\`, \`sum\`, \`sumIf\`, \`countIf\`, \`avg\`, \`min\`, \`max\`,
\`uniq\`, \`if\`, \`round\`, \`abs\`, \`lower\`, \`upper\`, \`length\`, \`coalesce\`, \`toStartOfMinute/Hour/Day/Week/Month/Year\`,
\`toDate\`, \`now()\`, \`today()\`, \`INTERVAL n SECOND|MINUTE|HOUR|DAY|WEEK|MONTH|QUARTER|YEAR\`; WHERE, GROUP BY,
HAVING, ORDER BY, LIMIT, OFFSET, DISTINCT, aliases, CTEs, subqueries, UNION/EXCEPT/INTERSECT, JOIN, LEFT JOIN,
CROSS JOIN, IN, BETWEEN, LIKE, CASE. Anything else is 400: \`invalid_analytics_query_type\` (not one SELECT),
\`invalid_analytics_table\`, \`invalid_analytics_function\`, \`invalid_analytics_query\` (syntax, unknown
columns, constructs outside the subset, more than 16 KiB).

**Limits.** At most 10,000 rows (a larger result is cut) and 4 MiB (422 \`query_memory_limit_exceeded\`);
5 s by default from when the query starts running (422 \`query_execution_timeout\`). A workspace runs one query at
a time by default and two more may wait; past that, or after waiting too long for a free query process, 429
\`query_quota_exceeded\` with \`Retry-After\`. Counts of a workspace or an API over time (sums of \`count\` per
\`time\`, \`outcome\` and \`key_space_id\`) are fast at any scale; queries per key or owner read every matching row.`;

const Rows = t.Array(t.Record(t.String(), t.Unknown()), { description: "The rows; each object's fields are the columns the query selects" });

/** What running a query can answer besides the errors of every authenticated route. */
const QUERY_ERRORS: ErrorCode[] = [
  "invalid_analytics_query", "invalid_analytics_table", "invalid_analytics_function", "invalid_analytics_query_type",
  "query_execution_timeout", "query_memory_limit_exceeded", "query_quota_exceeded", "analytics_not_configured",
  "analytics_connection_failed", "service_unavailable",
];

export const getVerificationsRoute = (deps: RouteDeps) => operation({
  path: "/v2/analytics.getVerifications",
  example: {query: "SELECT outcome, SUM(count) AS total FROM key_verifications_per_day_v1 GROUP BY outcome"},
  body: strictObject({
    query: t.String({
      minLength: 1,
      description: "One SELECT in the ClickHouse subset upstream documents, over key_verifications_v1, key_verifications_per_{minute,hour,day,month}_v1 and ratelimits_per_{minute,hour,day,month}_v1; at most 16 KiB",
    }),
  }),
  detail: {
    summary: "Query verification analytics with SQL", tags: ["analytics"], description: DESCRIPTION,
    ...documented({ data: Rows, errors: QUERY_ERRORS }),
  },
  handle: async (body, request, info) => ok(await deps.services.analytics.getVerifications(deps.principal(request, info), body)),
});
