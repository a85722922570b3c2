/** The official SDK (`@unkey/api` 2.5) against tollgate: analytics.getVerifications parses our rows and our errors. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Unkey } from "@unkey/api";
import { APIError, BadRequestErrorResponse, ForbiddenErrorResponse, UnprocessableEntityErrorResponse } from "@unkey/api/models/errors";
import { startHarness, type Harness } from "../support/harness.ts";
import { sdkClient } from "./client.ts";
import { TEST_ACTOR } from "../support/contract.ts";
import { flushAnalytics } from "../routes/v2/analytics/store.ts";

let h: Harness;
let unkey: Unkey;
const client = (rootKey: string) => sdkClient(h, rootKey);

beforeAll(async () => {
  h = await startHarness();
  unkey = client(h.rootKey);
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const { apiId } = (await unkey.apis.createApi({ name: "sdk-analytics" })).data;
  const alice = (await unkey.keys.createKey({ apiId, externalId: "alice" })).data.key;
  const bob = (await unkey.keys.createKey({ apiId, externalId: "bob", credits: { remaining: 1 } })).data.key;
  for (const key of [alice, alice, alice, bob, bob]) await unkey.keys.verifyKey({ key });
  await flushAnalytics(h);
});
afterAll(async () => { await h.stop(); });

describe("analytics.getVerifications through @unkey/api", () => {
  test("the spec's example queries: rows as selected", async () => {
    const total = await unkey.analytics.getVerifications({
      query: "SELECT SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM key_verifications_per_day_v1 WHERE time > now() - INTERVAL 7 DAY",
    });
    expect(total.meta.requestId).toStartWith("req_");
    expect(total.data).toEqual([{ total: 5, valid: 4 }]);
    const byOwner = await unkey.analytics.getVerifications({
      query: "SELECT external_id, SUM(count) AS total FROM key_verifications_per_day_v1 GROUP BY external_id ORDER BY total DESC LIMIT 10",
    });
    expect(byOwner.data).toEqual([{ external_id: "alice", total: 3 }, { external_id: "bob", total: 2 }]);
  });

  test("a refused table is BadRequestErrorResponse with upstream's code", async () => {
    const error = await unkey.analytics.getVerifications({ query: "SELECT * FROM keys" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestErrorResponse);
    expect((error as BadRequestErrorResponse).data$.error.type).toEndWith("/user/bad_request/invalid_analytics_table");
  });

  test("a result over the size limit is UnprocessableEntityErrorResponse", async () => {
    // 5⁴ rows of 12,000 characters each: about 7.5 MB, over the 4 MiB limit.
    const wide = `'${"x".repeat(4000)}'`;
    const query = `SELECT ${wide} AS x, ${wide} AS y, ${wide} AS z FROM key_verifications_v1 AS a, key_verifications_v1 AS b, key_verifications_v1 AS c, key_verifications_v1 AS d`;
    const error = await unkey.analytics.getVerifications({ query }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityErrorResponse);
  });

  test("read_api is not enough: ForbiddenErrorResponse", async () => {
    const error = await client(await h.rootKeyWith(["api.*.read_api"])).analytics.getVerifications({ query: "SELECT count() FROM key_verifications_v1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenErrorResponse);
  });

  test("a workspace without the opt-in: the SDK's generic error with status 412", async () => {
    await h.running.services.workspaces.create({ name: "no-analytics" }, TEST_ACTOR);
    const key = await h.rootKeyWith(["api.*.read_analytics"], "no-analytics");
    const error = await client(key).analytics.getVerifications({ query: "SELECT count() FROM key_verifications_v1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).statusCode).toBe(412);
    expect(JSON.parse((error as APIError).body).error.type).toEndWith("/service/data/analytics_not_configured");
  });
});
