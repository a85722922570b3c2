import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  BASE58, createApi, createKey, expectError, expectInvalid, INVALID_INPUT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";
import { auditRows } from "../../../support/key-management.ts";
import { createIdentity, getIdentity, IDENTITY_EXISTS, identityRowCount, RATELIMIT_ID, REQUEST_ID, verify } from "./support.ts";

const PATH = "/v2/identities.createIdentity";
const h = routeContract(PATH);

describe("200", () => {
  test("answers exactly {identityId} with an id_ identifier; the identity reads back with meta {} and no limits", async () => {
    const res = await h.post(PATH, { externalId: "user_plain" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: { identityId: expect.stringMatching(/^id_/) } });
    const identityId: string = res.body.data.identityId;
    expect(identityId.slice(3)).toMatch(BASE58);
    expect(await getIdentity(h, identityId)).toEqual({ id: identityId, externalId: "user_plain", meta: {}, ratelimits: [] });
  });

  test("stores meta and rate limits (autoApply defaults to false)", async () => {
    const meta = { email: "alice@example.com", plan: { tier: "premium", seats: 3 }, tags: ["a", "b"], on: true, none: null };
    const id = await createIdentity(h, "user_full", {
      meta,
      ratelimits: [
        { name: "requests", limit: 1000, duration: 60_000, autoApply: true },
        { name: "downloads", limit: 5, duration: 86_400_000 },
      ],
    });
    expect(await getIdentity(h, "user_full")).toEqual({
      id, externalId: "user_full", meta,
      ratelimits: [
        { id: RATELIMIT_ID, name: "downloads", limit: 5, duration: 86_400_000, autoApply: false },
        { id: RATELIMIT_ID, name: "requests", limit: 1000, duration: 60_000, autoApply: true },
      ],
    });
  });

  test("externalId bounds and characters: 1 and 255 characters, letters, digits, `_`, `.`, `-`", async () => {
    for (const externalId of ["x", "e".repeat(255), "A.b-c_9"]) {
      expect((await h.post(PATH, { externalId })).status).toBe(200);
    }
  });

  test("meta with exactly 100 properties and 50 rate limits are accepted", async () => {
    const meta = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
    const ratelimits = Array.from({ length: 50 }, (_, i) => ({ name: `limit-${i}`, limit: 1, duration: 1000 }));
    const id = await createIdentity(h, "user_bounds", { meta, ratelimits });
    const read = await getIdentity(h, id);
    expect(Object.keys(read.meta).length).toBe(100);
    expect(read.ratelimits.length).toBe(50);
  });

  test("the same externalId in two workspaces makes two identities", async () => {
    const other = await otherWorkspaceRootKey(h, "ws-create-twin");
    const a = await createIdentity(h, "user_twin");
    const b = await createIdentity(h, "user_twin", {}, other);
    expect(a).not.toBe(b);
  });

  test("writes one identity.create audit entry naming the identity and its externalId", async () => {
    const id = await createIdentity(h, "user_audited");
    const rows = await auditRows(h, "identity.create", id);
    expect(rows.length).toBe(1);
    expect(rows[0]!.resources).toEqual([{ type: "identity", id, name: "user_audited" }]);
    expect(rows[0]!.actorId).toMatch(/^rk_/);
  });
});

describe("identity rate limits in verification", () => {
  test("are shared by every key of the identity; a key limit with the same name wins", async () => {
    const apiId = await createApi(h, "shared-limits");
    const identityId = await createIdentity(h, "user_shared", { ratelimits: [{ name: "shared", limit: 2, duration: 60_000 }] });
    const a = await createKey(h, { apiId, externalId: "user_shared" });
    const b = await createKey(h, { apiId, externalId: "user_shared" });
    const own = await createKey(h, { apiId, externalId: "user_shared", ratelimits: [{ name: "shared", limit: 10, duration: 60_000 }] });
    const first = await verify(h, a.key, [{ name: "shared" }]);
    expect(first).toMatchObject({ valid: true, code: "VALID", identity: { id: identityId, externalId: "user_shared" } });
    expect(first.ratelimits).toEqual([expect.objectContaining({ name: "shared", limit: 2, remaining: 1, exceeded: false })]);
    expect((await verify(h, a.key, [{ name: "shared" }])).code).toBe("VALID");
    const denied = await verify(h, b.key, [{ name: "shared" }]);
    expect(denied).toMatchObject({ valid: false, code: "RATE_LIMITED" });
    expect(denied.ratelimits).toEqual([expect.objectContaining({ name: "shared", limit: 2, remaining: 0, exceeded: true })]);
    for (let i = 0; i < 3; i++) {
      const mine = await verify(h, own.key, [{ name: "shared" }]);
      expect(mine.code).toBe("VALID");
      expect(mine.ratelimits).toEqual([expect.objectContaining({ name: "shared", limit: 10, remaining: 9 - i })]);
    }
  });

  test("an autoApply identity limit applies without being named", async () => {
    const apiId = await createApi(h, "auto-limits");
    await createIdentity(h, "user_auto", { ratelimits: [{ name: "auto", limit: 1, duration: 60_000, autoApply: true }] });
    const a = await createKey(h, { apiId, externalId: "user_auto" });
    const b = await createKey(h, { apiId, externalId: "user_auto" });
    expect((await verify(h, a.key)).code).toBe("VALID");
    expect((await verify(h, b.key)).code).toBe("RATE_LIMITED");
  });
});

describe("400", () => {
  test("externalId missing, empty, too long or with a bad character", async () => {
    expectInvalid(h, await h.post(PATH, {}), "body.externalId");
    expectInvalid(h, await h.post(PATH, { externalId: "" }), "body.externalId");
    expectInvalid(h, await h.post(PATH, { externalId: "e".repeat(256) }), "body.externalId");
    expectInvalid(h, await h.post(PATH, { externalId: "user 1" }), "body.externalId");
    expectInvalid(h, await h.post(PATH, { externalId: "user/1" }), "body.externalId");
  });

  test("meta not an object, or with more than 100 properties", async () => {
    expectInvalid(h, await h.post(PATH, { externalId: "bad_meta", meta: [1] }), "body.meta");
    expectInvalid(h, await h.post(PATH, { externalId: "bad_meta", meta: "x" }), "body.meta");
    const meta = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    expectInvalid(h, await h.post(PATH, { externalId: "bad_meta", meta }), "body.meta");
    expect(await identityRowCount(h, "bad_meta")).toBe(0);
  });

  test("more than 50 rate limits, or a malformed one", async () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `limit-${i}`, limit: 1, duration: 1000 }));
    expectInvalid(h, await h.post(PATH, { externalId: "bad_rl", ratelimits: many }), "body.ratelimits");
    expectInvalid(h, await h.post(PATH, { externalId: "bad_rl", ratelimits: [{ name: "ab", limit: 1, duration: 1000 }] }), "body.ratelimits[0].name");
    expectInvalid(h, await h.post(PATH, { externalId: "bad_rl", ratelimits: [{ name: "abc", limit: 0, duration: 1000 }] }), "body.ratelimits[0].limit");
    expectInvalid(h, await h.post(PATH, { externalId: "bad_rl", ratelimits: [{ name: "abc", limit: 1, duration: 999 }] }), "body.ratelimits[0].duration");
    expectInvalid(h, await h.post(PATH, { externalId: "bad_rl", ratelimits: [{ name: "abc", limit: 1 }] }), "body.ratelimits[0].duration");
    expect(await identityRowCount(h, "bad_rl")).toBe(0);
  });

  test("two rate limits with one name; nothing is created", async () => {
    const ratelimits = [{ name: "dup", limit: 1, duration: 1000 }, { name: "dup", limit: 2, duration: 2000 }];
    const res = await h.post(PATH, { externalId: "dup_rl", ratelimits });
    expectError(h, res, 400, INVALID_INPUT, "Ratelimit with name 'dup' is already defined in the request");
    expect(await identityRowCount(h, "dup_rl")).toBe(0);
  });

  test("metadata over 1 MB of JSON (reachable through the service; the HTTP body limit is 1 MiB)", () => {
    const principal = { workspaceId: "ws_x", rootKeyId: "rk_x", permissions: new Set(["identity.*.create_identity"]), actor: { type: "cli" as const, id: "test" } };
    const meta = { blob: "x".repeat(1024 * 1024) };
    expect(() => h.running.services.identities.createIdentity(principal, { externalId: "too_big", meta }))
      .toThrow("Metadata is too large, it must be less than 1MB, got: 1.00");
  });

  test("unknown field is named", async () => {
    expectInvalid(h, await h.post(PATH, { externalId: "extra", environment: "prod" }), "body.environment");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post(PATH, { externalId: "nobody" }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without identity.*.create_identity; nothing is created", async () => {
    await h.expectDeniedWithout("identity.*.create_identity", { externalId: "denied" });
    expect(await identityRowCount(h, "denied")).toBe(0);
  });
});

describe("409", () => {
  test("a live identity with the same externalId; the first one is untouched", async () => {
    const id = await createIdentity(h, "user_dup", { meta: { first: true } });
    const res = await h.post(PATH, { externalId: "user_dup", meta: { second: true } });
    expectError(h, res, 409, IDENTITY_EXISTS, "Identity with externalId 'user_dup' already exists in this workspace.");
    expect(res.body.error.title).toBe("Conflict");
    expect(await getIdentity(h, "user_dup")).toMatchObject({ id, meta: { first: true } });
    expect((await auditRows(h, "identity.create", id)).length).toBe(1);
  });

  test("an identity made implicitly by createKey's externalId counts too", async () => {
    const apiId = await createApi(h, "implicit");
    await createKey(h, { apiId, externalId: "user_implicit" });
    expectError(h, await h.post(PATH, { externalId: "user_implicit" }), 409, IDENTITY_EXISTS);
  });

  test("concurrent creates with one externalId: exactly one 200, the rest 409, never a 500", async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => h.post(PATH, { externalId: "user_race" })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    expect(await identityRowCount(h, "user_race")).toBe(1);
  });
});
