/**
 * The parsers behind the API with random and mutated input (grammar.ts): analytics SQL through
 * analytics.getVerifications and permission queries through keys.verifyKey. Never a 5xx; a refusal
 * is only one of the documented errors; an analytics query, accepted or not, changes nothing stored.
 */
import type { Harness } from "../support/harness.ts";
import { TEST_ACTOR, createApi, createKey } from "../support/contract.ts";
import { rng } from "../support/prng.ts";
import { Campaign, settle } from "./campaign.ts";
import { digest } from "./digest.ts";
import { randomPermissionQuery, randomSql } from "./grammar.ts";
import type { FuzzSummary } from "./campaign.ts";

/** The type paths analytics.getVerifications may refuse a query with (catalogue: 400 and 422). */
const ANALYTICS_REFUSALS = [
  "service/application/invalid_input", "user/bad_request/invalid_analytics_query", "user/bad_request/invalid_analytics_table",
  "user/bad_request/invalid_analytics_function", "user/bad_request/invalid_analytics_query_type", "user/bad_request/query_range_exceeds_retention",
  "user/unprocessable_entity/query_execution_timeout", "user/unprocessable_entity/query_memory_limit_exceeded", "user/unprocessable_entity/query_rows_limit_exceeded",
];
const PERMISSION_REFUSALS = ["service/application/invalid_input", "user/bad_request/permissions_query_syntax_error"];
const VERIFY_CODES = ["VALID", "INSUFFICIENT_PERMISSIONS"];

function refusalType(h: Harness, text: string): string {
  return String(JSON.parse(text)?.error?.type ?? "").replace(`${h.url}/docs/api-reference/errors-v2/`, "");
}

export async function runQueryCampaign(h: Harness, opts: { seed: number; sql: number; permissions: number }): Promise<FuzzSummary> {
  const next = rng(opts.seed);
  const c = new Campaign(h);
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const apiId = await createApi(h, "fuzz-queries");
  const { key } = await createKey(h, { apiId, permissions: ["a", "b.c", "x.y"], externalId: "fuzzer" });
  for (let i = 0; i < 3; i++) await h.post("/v2/keys.verifyKey", { key });
  await settle(h);

  for (let i = 0; i < opts.sql; i++) {
    const query = randomSql(next);
    const before = digest(h);
    const a = await c.probe("/v2/analytics.getVerifications", { label: `query ${JSON.stringify(query)}`, text: JSON.stringify({ query }) });
    if (a.status >= 400 && !ANALYTICS_REFUSALS.includes(refusalType(h, a.text))) c.summary.problems.push(`query ${JSON.stringify(query)}: undocumented refusal ${a.text.slice(0, 300)}`);
    const changed = digest(h).changedByRequestsSince(before);
    if (changed.length > 0) c.summary.problems.push(`query ${JSON.stringify(query)} (answered ${a.status}) changed ${changed.join(", ")}`);
  }
  await c.alive("the analytics queries");

  for (let i = 0; i < opts.permissions; i++) {
    const permissions = randomPermissionQuery(next);
    const a = await c.probe("/v2/keys.verifyKey", { label: `permissions ${JSON.stringify(permissions.slice(0, 80))}`, text: JSON.stringify({ key, permissions }) });
    if (a.status >= 400 && !PERMISSION_REFUSALS.includes(refusalType(h, a.text))) c.summary.problems.push(`permissions ${JSON.stringify(permissions)}: undocumented refusal ${a.text.slice(0, 300)}`);
    if (a.status === 200 && !VERIFY_CODES.includes(JSON.parse(a.text).data.code)) c.summary.problems.push(`permissions ${JSON.stringify(permissions)}: ${a.text.slice(0, 300)}`);
  }
  await c.alive("the permission queries");
  return c.summary;
}
