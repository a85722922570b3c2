import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey, expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows } from "../../../support/key-management.ts";
import { createIdentity, getIdentity, IDENTITY_NOT_FOUND, identityRowCount, NOT_FOUND_DETAIL, REQUEST_ID, verify } from "./support.ts";

const PATH = "/v2/identities.deleteIdentity";
const h = routeContract(PATH);

describe("200", () => {
  test("answers data {} and the identity is gone, by externalId or by id", async () => {
    for (const [externalId, byId] of [["user_del_ext", false], ["user_del_id", true]] as const) {
      const id = await createIdentity(h, externalId);
      const res = await h.post(PATH, { identity: byId ? id : externalId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: {} });
      expectError(h, await h.post("/v2/identities.getIdentity", { identity: id }), 404, IDENTITY_NOT_FOUND);
    }
  });

  test("is a soft delete: the row and its rate-limit rows stay, deleted_at is server time", async () => {
    const id = await createIdentity(h, "user_soft", { ratelimits: [{ name: "kept", limit: 1, duration: 1000 }] });
    await h.post(PATH, { identity: id });
    expect(await h.records.rows("SELECT deleted_at FROM identities WHERE id = ?", id)).toEqual([{ deleted_at: h.clock.now() }]);
    expect(await h.records.count("ratelimit_configs", "identity_id = ?", id)).toBe(1);
  });

  test("the externalId is free at once; deleting the new identity too keeps both deleted rows", async () => {
    const first = await createIdentity(h, "user_reuse", { meta: { gen: 1 } });
    await h.post(PATH, { identity: "user_reuse" });
    const second = await createIdentity(h, "user_reuse", { meta: { gen: 2 } });
    expect(second).not.toBe(first);
    expect(await getIdentity(h, "user_reuse")).toMatchObject({ id: second, meta: { gen: 2 } });
    expect((await h.post(PATH, { identity: "user_reuse" })).status).toBe(200);
    const third = await createIdentity(h, "user_reuse");
    expect((await h.post(PATH, { identity: third })).status).toBe(200);
    expect(await identityRowCount(h, "user_reuse")).toBe(3);
  });

  test("keys of the identity keep verifying, without `identity` and without its rate limits", async () => {
    const apiId = await createApi(h, "orphans");
    const id = await createIdentity(h, "user_orphan", { meta: { plan: "pro" }, ratelimits: [{ name: "shared", limit: 1, duration: 60_000, autoApply: true }] });
    const k = await createKey(h, { apiId, externalId: "user_orphan", name: "orphan" });
    const before = await verify(h, k.key);
    expect(before).toMatchObject({ valid: true, identity: { id, externalId: "user_orphan", meta: { plan: "pro" } } });
    await h.post(PATH, { identity: id });
    for (let i = 0; i < 2; i++) {
      const after = await verify(h, k.key);
      expect(after).toMatchObject({ valid: true, code: "VALID", keyId: k.keyId, name: "orphan" });
      expect(after.identity).toBeUndefined();
      expect(after.ratelimits).toBeUndefined();
    }
    expect((await h.post("/v2/keys.getKey", { keyId: k.keyId })).body.data.identity).toBeUndefined();
  });

  test("a key created later with the same externalId gets a new identity, not the deleted one", async () => {
    const apiId = await createApi(h, "relink");
    const old = await createIdentity(h, "user_relink");
    await h.post(PATH, { identity: old });
    const k = await createKey(h, { apiId, externalId: "user_relink" });
    const identity = (await verify(h, k.key)).identity;
    expect(identity.externalId).toBe("user_relink");
    expect(identity.id).not.toBe(old);
  });

  test("writes one identity.delete audit entry", async () => {
    const id = await createIdentity(h, "user_audit_del");
    await h.post(PATH, { identity: id });
    const rows = await auditRows(h, "identity.delete", id);
    expect(rows.length).toBe(1);
    expect(rows[0]!.resources).toEqual([{ type: "identity", id, name: "user_audit_del" }]);
  });
});

describe("400", () => {
  test("identity missing or empty; unknown field", async () => {
    expectInvalid(h, await h.post(PATH, {}), "body.identity");
    expectInvalid(h, await h.post(PATH, { identity: "" }), "body.identity");
    expectInvalid(h, await h.post(PATH, { identity: "x", permanent: true }), "body.permanent");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post(PATH, { identity: "x" }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without identity.*.delete_identity; the identity survives", async () => {
    const id = await createIdentity(h, "user_survivor");
    await h.expectDeniedWithout("identity.*.delete_identity", { identity: id });
    expect((await getIdentity(h, id)).id).toBe(id);
  });
});

describe("404", () => {
  test("unknown identity", async () => {
    expectError(h, await h.post(PATH, { identity: "user_never" }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("already deleted", async () => {
    const id = await createIdentity(h, "user_twice");
    expect((await h.post(PATH, { identity: id })).status).toBe(200);
    expectError(h, await h.post(PATH, { identity: id }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expect((await auditRows(h, "identity.delete", id)).length).toBe(1);
  });

  test("an identity of another workspace; it survives", async () => {
    const id = await createIdentity(h, "user_foreign");
    const other = await otherWorkspaceRootKey(h, "ws-delete-other");
    expectError(h, await h.post(PATH, { identity: id }, { key: other }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await h.post(PATH, { identity: "user_foreign" }, { key: other }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expect((await getIdentity(h, id)).id).toBe(id);
  });
});
