import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  createApi, createKey, expectError, expectInvalid, INSUFFICIENT, INVALID_INPUT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";
import { auditRows } from "../../../support/key-management.ts";
import { createIdentity, getIdentity, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL, RATELIMIT_ID, REQUEST_ID, verify } from "./support.ts";

const PATH = "/v2/identities.updateIdentity";
const h = routeContract(PATH);
const LIMIT_A = { name: "limit-a", limit: 10, duration: 60_000 };
const LIMIT_B = { name: "limit-b", limit: 20, duration: 60_000, autoApply: true };

describe("200", () => {
  test("meta is replaced, not merged; the answer is the full stored Identity", async () => {
    const id = await createIdentity(h, "user_meta", { meta: { a: 1, b: 2 }, ratelimits: [LIMIT_A] });
    const res = await h.post(PATH, { identity: "user_meta", meta: { c: 3 } });
    expect(res.status).toBe(200);
    const expected = { id, externalId: "user_meta", meta: { c: 3 }, ratelimits: [{ id: RATELIMIT_ID, ...LIMIT_A, autoApply: false }] };
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: expected });
    expect(await getIdentity(h, id)).toEqual(res.body.data);
  });

  test("omitted fields are kept; `{}` clears meta; `[]` clears the limits", async () => {
    const id = await createIdentity(h, "user_clear", { meta: { a: 1 }, ratelimits: [LIMIT_A] });
    const untouched = (await h.post(PATH, { identity: id })).body.data;
    expect(untouched).toMatchObject({ meta: { a: 1 }, ratelimits: [{ name: "limit-a" }] });
    const keptLimits = (await h.post(PATH, { identity: id, meta: {} })).body.data;
    expect(keptLimits).toMatchObject({ meta: {}, ratelimits: [{ name: "limit-a" }] });
    const cleared = (await h.post(PATH, { identity: id, ratelimits: [] })).body.data;
    expect(cleared).toEqual({ id, externalId: "user_clear", meta: {}, ratelimits: [] });
    expect(await getIdentity(h, id)).toEqual(cleared);
  });

  test("limits are replaced by name: a kept name keeps its id and takes the new values, others are added or removed", async () => {
    const id = await createIdentity(h, "user_limits", { ratelimits: [LIMIT_A, { name: "limit-gone", limit: 1, duration: 1000 }] });
    const before = await getIdentity(h, id);
    const idA = before.ratelimits.find((r: { name: string }) => r.name === "limit-a").id;
    const res = await h.post(PATH, { identity: id, ratelimits: [{ ...LIMIT_A, limit: 99, autoApply: true }, LIMIT_B] });
    expect(res.body.data.ratelimits).toEqual([
      { id: idA, name: "limit-a", limit: 99, duration: 60_000, autoApply: true },
      { id: RATELIMIT_ID, name: "limit-b", limit: 20, duration: 60_000, autoApply: true },
    ]);
    expect(res.body.data.ratelimits[1].id).not.toBe(before.ratelimits[1].id);
    expect(await getIdentity(h, id)).toEqual(res.body.data);
  });

  test("verification shows the new identity meta at once, even for a key whose snapshot was cached", async () => {
    const apiId = await createApi(h, "meta-cache");
    const id = await createIdentity(h, "user_cached", { meta: { plan: "free" } });
    const k = await createKey(h, { apiId, externalId: "user_cached" });
    expect((await verify(h, k.key)).identity).toEqual({ id, externalId: "user_cached", meta: { plan: "free" } });
    await h.post(PATH, { identity: "user_cached", meta: { plan: "pro", seats: 5 } });
    expect((await verify(h, k.key)).identity).toEqual({ id, externalId: "user_cached", meta: { plan: "pro", seats: 5 } });
  });

  test("verification applies new identity limits at once, and stops applying removed ones", async () => {
    const apiId = await createApi(h, "limit-cache");
    await createIdentity(h, "user_rl_cache");
    const k = await createKey(h, { apiId, externalId: "user_rl_cache" });
    expect((await verify(h, k.key)).ratelimits).toBeUndefined();
    await h.post(PATH, { identity: "user_rl_cache", ratelimits: [{ name: "tight", limit: 1, duration: 60_000, autoApply: true }] });
    expect((await verify(h, k.key)).code).toBe("VALID");
    expect((await verify(h, k.key)).code).toBe("RATE_LIMITED");
    await h.post(PATH, { identity: "user_rl_cache", ratelimits: [] });
    const after = await verify(h, k.key);
    expect(after.code).toBe("VALID");
    expect(after.ratelimits).toBeUndefined();
  });

  test("writes one identity.update audit entry", async () => {
    const id = await createIdentity(h, "user_audit_upd");
    await h.post(PATH, { identity: id, meta: { x: 1 } });
    const rows = await auditRows(h, "identity.update", id);
    expect(rows.length).toBe(1);
    expect(rows[0]!.resources).toEqual([{ type: "identity", id, name: "user_audit_upd" }]);
  });
});

describe("400", () => {
  test("the same limit name twice; nothing changes", async () => {
    const id = await createIdentity(h, "user_dupe", { meta: { keep: true }, ratelimits: [LIMIT_A] });
    const before = await getIdentity(h, id);
    const res = await h.post(PATH, { identity: id, meta: {}, ratelimits: [LIMIT_B, LIMIT_B] });
    expectError(h, res, 400, INVALID_INPUT, "Ratelimit with name 'limit-b' is already defined in the request");
    expect(await getIdentity(h, id)).toEqual(before);
  });

  test("identity missing or empty; meta over 100 properties; more than 50 limits; unknown field", async () => {
    expectInvalid(h, await h.post(PATH, { meta: {} }), "body.identity");
    expectInvalid(h, await h.post(PATH, { identity: "" }), "body.identity");
    const meta = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    expectInvalid(h, await h.post(PATH, { identity: "x", meta }), "body.meta");
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `limit-${i}`, limit: 1, duration: 1000 }));
    expectInvalid(h, await h.post(PATH, { identity: "x", ratelimits: many }), "body.ratelimits");
    expectInvalid(h, await h.post(PATH, { identity: "x", externalId: "y" }), "body.externalId");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post(PATH, { identity: "x" }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without identity.*.update_identity; nothing changes", async () => {
    const id = await createIdentity(h, "user_locked", { meta: { v: 1 } });
    await h.expectDeniedWithout("identity.*.update_identity", { identity: id, meta: { v: 2 } });
    expect((await getIdentity(h, id)).meta).toEqual({ v: 1 });
  });

  test("a per-identity update grant does not apply (upstream needs the wildcard)", async () => {
    const id = await createIdentity(h, "user_per_id");
    const res = await h.post(PATH, { identity: id, meta: {} }, { key: await h.rootKeyWith([`identity.${id}.update_identity`]) });
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'identity.*.update_identity'");
  });
});

describe("404", () => {
  test("unknown, deleted, or of another workspace", async () => {
    expectError(h, await h.post(PATH, { identity: "user_none", meta: {} }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    const gone = await createIdentity(h, "user_gone");
    await h.post("/v2/identities.deleteIdentity", { identity: gone });
    expectError(h, await h.post(PATH, { identity: gone, meta: {} }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    const theirs = await createIdentity(h, "user_theirs");
    const other = await otherWorkspaceRootKey(h, "ws-update-other");
    expectError(h, await h.post(PATH, { identity: theirs, meta: {} }, { key: other }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await h.post(PATH, { identity: "user_theirs", meta: {} }, { key: other }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
  });
});
