/**
 * keys.verifyKey's order of checks (UPSTREAM-BEHAVIOUR §5.6, DECISIONS "Verification"), pinned pair
 * by pair: for each adjacent pair of checks, a key that fails both; the answer must be the earlier
 * check's, and exactly what that check leaves spent must be spent: credits, tokens of the
 * identity's rate limit, verification events recorded for the key.
 * The rate limit is the identity's, not the key's, so that it can be read back through a second key
 * of the same identity even when the first is deleted, disabled or expired. A deleted API and a
 * root key without verify_key on it answer alike (a bare NOT_FOUND, recorded), so their order is
 * pinned only as far as it can be seen.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, createApi, createKey, expectError } from "../../../support/contract.ts";
import { ALL_GRANTS } from "../../../../src/services/auth/index.ts";

/** The identity's autoApply limit: every verification of its keys that reaches the limit check uses a token. */
const LIMIT = 3;
const MINUTE_MS = 60_000;
const BARE_NOT_FOUND = { valid: false, code: "NOT_FOUND" };
const MALFORMED_QUERY = "read AND";

interface Row {
  /** The earlier check, then the later one, both failed by the key. */
  pair: string;
  /** The key's workspace: `default` unless `other` (whose keys default's root key may not see). */
  workspace?: "other";
  /** createKey fields besides apiId and externalId; credits 5 and permission `read` unless given. */
  key?: Record<string, unknown>;
  /** Tokens of the identity's limit used before the verification (LIMIT exhausts it). */
  limitUsedBefore?: number;
  deleteKey?: boolean;
  deleteApi?: boolean;
  /** Who verifies: default's bootstrap key, or a root key that may verify only another API's keys. */
  caller?: "verify-other-api-only";
  /** verifyKey fields besides `key`. */
  request?: Record<string, unknown>;
  answer: { code: string; bare?: boolean } | { status: 400; type: string };
  /** What is left afterwards: the key's credits, the identity's used tokens, the key's recorded events by outcome. */
  after: { credits: number; limitUsed: number; events: Record<string, number> };
}

const ROWS: Row[] = [
  {
    pair: "another workspace's key before a deleted API: nothing is recorded in the key's workspace",
    workspace: "other", deleteApi: true,
    answer: { code: "NOT_FOUND", bare: true }, after: { credits: 5, limitUsed: 0, events: {} },
  },
  {
    pair: "a deleted API before a root key without verify_key on it",
    deleteApi: true, caller: "verify-other-api-only",
    answer: { code: "NOT_FOUND", bare: true }, after: { credits: 5, limitUsed: 0, events: { NOT_FOUND: 1 } },
  },
  {
    pair: "a root key without verify_key on the API before a malformed permissions query",
    caller: "verify-other-api-only", request: { permissions: MALFORMED_QUERY },
    answer: { code: "NOT_FOUND", bare: true }, after: { credits: 5, limitUsed: 0, events: { NOT_FOUND: 1 } },
  },
  {
    pair: "a malformed permissions query before a deleted key",
    deleteKey: true, request: { permissions: MALFORMED_QUERY },
    answer: { status: 400, type: "user/bad_request/permissions_query_syntax_error" }, after: { credits: 5, limitUsed: 0, events: {} },
  },
  {
    pair: "a deleted key before a disabled one",
    key: { enabled: false }, deleteKey: true,
    answer: { code: "NOT_FOUND" }, after: { credits: 5, limitUsed: 0, events: { NOT_FOUND: 1 } },
  },
  {
    pair: "a disabled key before an expired one",
    key: { enabled: false, expires: 0 },
    answer: { code: "DISABLED" }, after: { credits: 5, limitUsed: 0, events: { DISABLED: 1 } },
  },
  {
    pair: "an expired key before a failing permissions query",
    key: { expires: 0 }, request: { permissions: "write" },
    answer: { code: "EXPIRED" }, after: { credits: 5, limitUsed: 0, events: { EXPIRED: 1 } },
  },
  {
    pair: "a failing permissions query before an exhausted rate limit",
    limitUsedBefore: LIMIT, request: { permissions: "write" },
    answer: { code: "INSUFFICIENT_PERMISSIONS" }, after: { credits: 5, limitUsed: LIMIT, events: { INSUFFICIENT_PERMISSIONS: 1 } },
  },
  {
    pair: "a failing permissions query before the rate limits: no token is used",
    request: { permissions: "write" },
    answer: { code: "INSUFFICIENT_PERMISSIONS" }, after: { credits: 5, limitUsed: 0, events: { INSUFFICIENT_PERMISSIONS: 1 } },
  },
  {
    pair: "a failing permissions query before a limit nobody configured (412)",
    request: { permissions: "write", ratelimits: [{ name: "unconfigured" }] },
    answer: { code: "INSUFFICIENT_PERMISSIONS" }, after: { credits: 5, limitUsed: 0, events: { INSUFFICIENT_PERMISSIONS: 1 } },
  },
  {
    pair: "an exhausted rate limit before no credits",
    key: { credits: { remaining: 0 } }, limitUsedBefore: LIMIT,
    answer: { code: "RATE_LIMITED" }, after: { credits: 0, limitUsed: LIMIT, events: { RATE_LIMITED: 1 } },
  },
  {
    pair: "an exhausted rate limit before the credits: none is spent",
    limitUsedBefore: LIMIT, request: { credits: { cost: 2 } },
    answer: { code: "RATE_LIMITED" }, after: { credits: 5, limitUsed: LIMIT, events: { RATE_LIMITED: 1 } },
  },
  {
    pair: "the rate limits before no credits: the token is used though the credits fail (upstream)",
    key: { credits: { remaining: 0 } },
    answer: { code: "USAGE_EXCEEDED" }, after: { credits: 0, limitUsed: 1, events: { USAGE_EXCEEDED: 1 } },
  },
];

interface Workspace {
  /** Every grant there. */
  rootKey: string;
  /** An API whose keys read the identity's limit back. */
  probeApiId: string;
}

let h: Harness;
const ws: Record<"default" | "other", Workspace> = {} as Record<"default" | "other", Workspace>;
let verifiesOtherApiOnly: string;

beforeAll(async () => {
  h = await startHarness();
  const workspaces = h.running.services.workspaces;
  await workspaces.setAnalytics("default", true, TEST_ACTOR);
  await workspaces.create({ name: "other", analyticsEnabled: true }, TEST_ACTOR);
  ws.default = { rootKey: h.rootKey, probeApiId: await createApi(h, "probe") };
  const otherKey = await h.rootKeyWith([...ALL_GRANTS], "other");
  ws.other = { rootKey: otherKey, probeApiId: await createApi(h, "probe", otherKey) };
  verifiesOtherApiOnly = await h.rootKeyWith([`api.${await createApi(h, "elsewhere")}.verify_key`]);
});
afterAll(async () => { await h.stop(); });

async function post(path: string, body: unknown, key: string): Promise<any> {
  const res = await h.post(path, body, { key });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The row's key in an API of its own, owned by an identity of its own with the LIMIT, plus a probe key of that identity. */
async function build(row: Row, n: number): Promise<{ keyId: string; key: string; probe: string; space: Workspace }> {
  const space = ws[row.workspace ?? "default"];
  const externalId = `order_${n}`;
  await post("/v2/identities.createIdentity", { externalId, ratelimits: [{ name: "calls", limit: LIMIT, duration: MINUTE_MS, autoApply: true }] }, space.rootKey);
  const apiId = await createApi(h, `order-${n}`, space.rootKey);
  const k = await createKey(h, { apiId, externalId, credits: { remaining: 5 }, permissions: ["read"], ...row.key }, space.rootKey);
  const probe = await createKey(h, { apiId: space.probeApiId, externalId }, space.rootKey);
  if (row.limitUsedBefore) await post("/v2/keys.verifyKey", { key: probe.key, ratelimits: [{ name: "calls", cost: row.limitUsedBefore }] }, space.rootKey);
  if (row.deleteKey) await post("/v2/keys.deleteKey", { keyId: k.keyId }, space.rootKey);
  if (row.deleteApi) await post("/v2/apis.deleteApi", { apiId }, space.rootKey);
  return { ...k, probe: probe.key, space };
}

/** What the verification left: the key's credits (read from the table: the key may be deleted), used tokens, recorded events. */
async function leftOver(keyId: string, probe: string, space: Workspace): Promise<Row["after"]> {
  const credits = (await h.records.rows<{ remaining: number }>("SELECT remaining FROM keys WHERE id = ?", keyId))[0]!.remaining;
  const read = await post("/v2/keys.verifyKey", { key: probe, ratelimits: [{ name: "calls", cost: 0 }] }, space.rootKey);
  await h.running.services.verificationEvents.flush();
  const query = `SELECT outcome, SUM(count) AS n FROM key_verifications_per_minute_v1 WHERE key_id = '${keyId}' GROUP BY outcome`;
  const rows = await post("/v2/analytics.getVerifications", { query }, space.rootKey) as Array<{ outcome: string; n: number }>;
  return { credits, limitUsed: LIMIT - read.ratelimits[0].remaining, events: Object.fromEntries(rows.map((r) => [r.outcome, r.n])) };
}

ROWS.forEach((row, n) => {
  test(`${"status" in row.answer ? row.answer.status : row.answer.code}: ${row.pair}`, async () => {
    const k = await build(row, n);
    const res = await h.post("/v2/keys.verifyKey", { key: k.key, ...row.request }, { key: row.caller ? verifiesOtherApiOnly : h.rootKey });
    const answer = row.answer;
    if ("status" in answer) expectError(h, res, answer.status, answer.type);
    else if (answer.bare) expect({ status: res.status, data: res.body.data }).toEqual({ status: 200, data: BARE_NOT_FOUND });
    else expect({ status: res.status, valid: res.body.data.valid, code: res.body.data.code, keyId: res.body.data.keyId }).toEqual({ status: 200, valid: false, code: answer.code, keyId: k.keyId });
    expect(await leftOver(k.keyId, k.probe, k.space)).toEqual(row.after);
  });
});
