import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createKey, expectError, expectInvalid, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, countRows, createRole, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.deleteKey", { api: "delete", setup: (h) => createRole(h, "deleter-role", ["x.y"]) });

const del = h.call;
const fullKey = () => createKey(h, { apiId: h.apiId, permissions: ["d.p"], roles: ["deleter-role"], ratelimits: [{ name: "lim", limit: 5, duration: 1000 }] });

describe("200", () => {
  test("a soft delete answers {} and the very next verification is NOT_FOUND", async () => {
    const { keyId, key } = await fullKey();
    expect((await verify(h, key)).code).toBe("VALID");
    const res = await del({ keyId });
    expect({ status: res.status, data: res.body.data }).toEqual({ status: 200, data: {} });
    expect((await verify(h, key)).code).toBe("NOT_FOUND");
    expectError(h, await h.post("/v2/keys.getKey", { keyId }), 404, KEY_NOT_FOUND);
    const listed = await h.post("/v2/apis.listKeys", { apiId: h.apiId });
    expect(listed.body.data.map((k: { keyId: string }) => k.keyId)).not.toContain(keyId);
  });

  test("a soft delete keeps the row (with deleted_at) and its links", async () => {
    const { keyId } = await fullKey();
    await del({ keyId, permanent: false });
    expect(await h.records.rows("SELECT deleted_at FROM keys WHERE id = ?", keyId)).toEqual([{ deleted_at: h.clock.now() }]);
    expect(await countRows(h, "key_permissions", "key_id", keyId)).toBe(1);
  });

  test("a permanent delete removes the row with its permissions, roles and limits", async () => {
    const { keyId, key } = await fullKey();
    expect((await verify(h, key)).code).toBe("VALID");
    expect((await del({ keyId, permanent: true })).status).toBe(200);
    expect((await verify(h, key)).code).toBe("NOT_FOUND");
    for (const [table, column] of [["keys", "id"], ["key_permissions", "key_id"], ["key_roles", "key_id"], ["ratelimit_configs", "key_id"]] as const) {
      expect(await countRows(h, table, column, keyId)).toBe(0);
    }
  });

  test("writes one key.delete audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, name: "doomed" });
    await del({ keyId });
    const rows = await auditRows(h, "key.delete", keyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.resources).toEqual([{ type: "key", id: keyId, name: "doomed" }, { type: "api", id: h.apiId, name: "delete" }]);
  });

  test("a per-API delete_key grant is enough", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    expect((await del({ keyId }, await h.rootKeyWith([`api.${h.apiId}.delete_key`]))).status).toBe(200);
  });
});

describe("400", () => {
  test.each([
    ["no keyId", {}, "body.keyId"],
    ["permanent as a string", { keyId: "key_1", permanent: "yes" }, "body.permanent"],
    ["an unknown field", { keyId: "key_1", hard: true }, "body.hard"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await del(body), location);
  });
});

describe("403", () => {
  test("without delete_key on the key's API (update_key is not enough); the key stays", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("api.*.delete_key", { keyId }, h.apiId);
    expect((await verify(h, key)).code).toBe("VALID");
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await del({ keyId: "key_unknown" }), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("a key that is already soft-deleted, also for a permanent delete", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await del({ keyId });
    expectError(h, await del({ keyId }), 404, KEY_NOT_FOUND);
    expectError(h, await del({ keyId, permanent: true }), 404, KEY_NOT_FOUND);
    expect(await auditRows(h, "key.delete", keyId)).toHaveLength(1);
  });

  test("a key of another workspace: the unknown key's answer", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId }, KEY_NOT_FOUND, "We could not find the requested key.");
    expect((await verify(h, key)).code).toBe("VALID");
  });
});
