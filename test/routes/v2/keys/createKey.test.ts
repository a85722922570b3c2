import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { base58 } from "@scure/base";
import { routeContract } from "../../../support/route-contract.ts";
import {
  API_NOT_FOUND, BASE58, createApi, createKey, expectError, INSUFFICIENT, createRole, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";

const h = routeContract("/v2/keys.createKey", { api: "keys" });

const getKey = async (keyId: string, decrypt = false) => (await h.post("/v2/keys.getKey", { keyId, ...(decrypt ? { decrypt } : {}) })).body.data;
const count = (table: string) => h.records.count(table);

/** Every text or blob cell of every table, for "the plaintext is stored nowhere". */
async function allStoredText(): Promise<string> {
  const cells: string[] = [];
  for (const name of await h.records.tables()) {
    for (const row of await h.records.rows<Record<string, unknown>>(`SELECT * FROM "${name}"`)) {
      for (const v of Object.values(row)) {
        if (typeof v === "string") cells.push(v);
        else if (v instanceof Uint8Array) cells.push(new TextDecoder().decode(v));
      }
    }
  }
  return cells.join("\n");
}

describe("200", () => {
  test("returns exactly {keyId, key}; key is `<prefix>_<base58 of 16 bytes>`", async () => {
    const res = await h.post("/v2/keys.createKey", { apiId: h.apiId, prefix: "sk" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(["key", "keyId"]);
    const { keyId, key } = res.body.data;
    expect(keyId).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(key.startsWith("sk_")).toBe(true);
    const random = key.slice(3);
    expect(random).toMatch(BASE58);
    expect(base58.decode(random).length).toBe(16);
    expect((await getKey(keyId)).start).toBe(`sk_${random.slice(0, 4)}`);
  });

  test("without a prefix the key is only base58 and start is its first 4 characters", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    expect(key).toMatch(BASE58);
    expect(base58.decode(key).length).toBe(16);
    expect((await getKey(keyId)).start).toBe(key.slice(0, 4));
  });

  test("a prefix may hold underscores and be 16 characters long", async () => {
    const prefix = "my_app_prefix_16";
    const { keyId, key } = await createKey(h, { apiId: h.apiId, prefix });
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    expect(base58.decode(key.slice(prefix.length + 1)).length).toBe(16);
    expect((await getKey(keyId)).start).toBe(key.slice(0, prefix.length + 5));
  });

  test.each([16, 32, 255])("byteLength %d gives that many random bytes", async (byteLength) => {
    const { key } = await createKey(h, { apiId: h.apiId, prefix: "bl", byteLength });
    expect(base58.decode(key.slice(3)).length).toBe(byteLength);
  });

  test("the key is stored only as base64(sha256(key)); no column holds the plaintext", async () => {
    const plain = await createKey(h, { apiId: h.apiId, prefix: "st" });
    const recoverable = await createKey(h, { apiId: h.apiId, prefix: "rc", recoverable: true });
    for (const k of [plain, recoverable]) {
      expect(await h.records.rows("SELECT hash FROM keys WHERE id = ?", k.keyId)).toEqual([{ hash: createHash("sha256").update(k.key).digest("base64") }]);
      const stored = await allStoredText();
      expect(stored.includes(k.key)).toBe(false);
      expect(stored.includes(k.key.slice(3))).toBe(false);
    }
  });

  test("every field given at creation is visible in getKey", async () => {
    await createRole(h, "reader", ["docs.read"]);
    const { keyId, key } = await createKey(h, {
      apiId: h.apiId, prefix: "full", name: "everything", externalId: "user_42", meta: { plan: "pro", nested: { a: [1, 2] } },
      roles: ["reader"], permissions: ["docs.write", "docs.*"], expires: 4102444800000,
      credits: { remaining: 50, refill: { interval: "monthly", amount: 100, refillDay: 15 } },
      ratelimits: [{ name: "requests", limit: 10, duration: 60000, autoApply: true }, { name: "bursts", limit: 2, duration: 1000 }],
      enabled: true, recoverable: true,
    });
    const view = await getKey(keyId, true);
    expect(view).toEqual({
      keyId, start: key.slice(0, 9), enabled: true, createdAt: h.clock.now(), name: "everything",
      meta: { plan: "pro", nested: { a: [1, 2] } }, expires: 4102444800000,
      permissions: ["docs.*", "docs.read", "docs.write"], roles: ["reader"],
      credits: { remaining: 50, refill: { interval: "monthly", amount: 100, refillDay: 15 } },
      identity: { id: expect.stringMatching(/^id_/), externalId: "user_42" },
      ratelimits: [
        { id: expect.stringMatching(/^rl_/), name: "bursts", limit: 2, duration: 1000, autoApply: false },
        { id: expect.stringMatching(/^rl_/), name: "requests", limit: 10, duration: 60000, autoApply: true },
      ],
      plaintext: key,
    });
  });

  test("externalId creates one identity and links every key with it; verifyKey shows it", async () => {
    const before = await count("identities");
    const a = await createKey(h, { apiId: h.apiId, externalId: "org.acme-1_x" });
    const b = await createKey(h, { apiId: h.apiId, externalId: "org.acme-1_x" });
    expect(await count("identities")).toBe(before + 1);
    const ia = (await getKey(a.keyId)).identity;
    expect(ia).toEqual({ id: expect.stringMatching(/^id_/), externalId: "org.acme-1_x" });
    expect((await getKey(b.keyId)).identity).toEqual(ia);
    const v = await h.post("/v2/keys.verifyKey", { key: b.key });
    expect(v.body.data).toEqual({ valid: true, code: "VALID", keyId: b.keyId, enabled: true, identity: ia });
  });

  test("unknown permissions are created (name = slug), known ones reused, duplicates collapsed", async () => {
    const before = await count("permissions");
    const k1 = await createKey(h, { apiId: h.apiId, permissions: ["billing.read", "billing.read", "billing.write"] });
    expect(await count("permissions")).toBe(before + 2);
    const rows = await h.records.rows("SELECT name, slug FROM permissions WHERE slug LIKE 'billing.%' ORDER BY slug");
    expect(rows).toEqual([{ name: "billing.read", slug: "billing.read" }, { name: "billing.write", slug: "billing.write" }]);
    await createKey(h, { apiId: h.apiId, permissions: ["billing.read"] });
    expect(await count("permissions")).toBe(before + 2);
    expect((await getKey(k1.keyId)).permissions).toEqual(["billing.read", "billing.write"]);
  });

  test("a key's permissions include those of its roles", async () => {
    await createRole(h, "ops", ["deploy.run", "logs.read"]);
    const k = await createKey(h, { apiId: h.apiId, roles: ["ops"], permissions: ["logs.read", "alerts.ack"] });
    const view = await getKey(k.keyId);
    expect(view.roles).toEqual(["ops"]);
    expect(view.permissions).toEqual(["alerts.ack", "deploy.run", "logs.read"]);
  });

  test("enabled:false is stored and the key verifies DISABLED", async () => {
    const k = await createKey(h, { apiId: h.apiId, enabled: false });
    expect((await getKey(k.keyId)).enabled).toBe(false);
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data.code).toBe("DISABLED");
  });

  test("credits: remaining null or {} means unlimited (no credits in the view); a daily refill drops refillDay", async () => {
    for (const credits of [{ remaining: null }, {}]) {
      const k = await createKey(h, { apiId: h.apiId, credits });
      expect("credits" in (await getKey(k.keyId))).toBe(false);
    }
    const daily = await createKey(h, { apiId: h.apiId, credits: { remaining: 0, refill: { interval: "daily", amount: 5, refillDay: 3 } } });
    expect((await getKey(daily.keyId)).credits).toEqual({ remaining: 0, refill: { interval: "daily", amount: 5 } });
  });

  test("`api.<apiId>.create_key` suffices; recoverable also needs `encrypt_key`", async () => {
    const scoped = await h.rootKeyWith([`api.${h.apiId}.create_key`, `api.${h.apiId}.encrypt_key`]);
    expect((await h.post("/v2/keys.createKey", { apiId: h.apiId }, { key: scoped })).status).toBe(200);
    expect((await h.post("/v2/keys.createKey", { apiId: h.apiId, recoverable: true }, { key: scoped })).status).toBe(200);
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post("/v2/keys.createKey", { apiId: h.apiId }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without create_key; nothing is created", async () => {
    const before = await count("keys");
    await h.expectDeniedWithout("api.*.create_key", { apiId: h.apiId }, h.apiId);
    expect(await count("keys")).toBe(before);
  });

  test("recoverable without encrypt_key; nothing is created", async () => {
    const before = await count("keys");
    await h.expectDeniedWithout("api.*.encrypt_key", { apiId: h.apiId, recoverable: true }, h.apiId);
    expect(await count("keys")).toBe(before);
  });

  test("create_key on another API does not apply", async () => {
    const other = await createApi(h, "other-api");
    const res = await h.post("/v2/keys.createKey", { apiId: h.apiId }, { key: await h.rootKeyWith([`api.${other}.create_key`]) });
    expectError(h, res, 403, INSUFFICIENT);
  });
});

describe("404", () => {
  // createKey's own words, not apis.getApi's ("The requested API does not exist or has been deleted.").
  const API_MISSING = "The specified API was not found.";

  test("404: 'The specified API was not found.' for an unknown API (upstream v2_keys_create_key 404_test 'nonexistent api')", async () => {
    expectError(h, await h.post("/v2/keys.createKey", { apiId: "api_doesnotexist" }), 404, API_NOT_FOUND, API_MISSING);
  });

  test("404: 'The specified API was not found.' for a deleted API (upstream v2_keys_create_key 404_test 'deleted api')", async () => {
    const gone = await createApi(h, "gone");
    await h.post("/v2/apis.deleteApi", { apiId: gone });
    expectError(h, await h.post("/v2/keys.createKey", { apiId: gone }), 404, API_NOT_FOUND, API_MISSING);
  });

  test("404: 'The specified API was not found.' for an API of another workspace (upstream v2_keys_create_key 404_test 'api from different workspace')", async () => {
    await h.expectHiddenFromOtherWorkspace({ apiId: h.apiId }, API_NOT_FOUND, API_MISSING);
  });

  test("unknown role: role_not_found naming it, and nothing is created", async () => {
    const before = { keys: await count("keys"), permissions: await count("permissions"), identities: await count("identities") };
    const res = await h.post("/v2/keys.createKey", { apiId: h.apiId, roles: ["ghost"], permissions: ["fresh.perm"], externalId: "fresh_owner" });
    expectError(h, res, 404, "service/data/role_not_found", "Role 'ghost' was not found.");
    expect({ keys: await count("keys"), permissions: await count("permissions"), identities: await count("identities") }).toEqual(before);
  });

  test("a role of another workspace is not found", async () => {
    await createRole(h, "foreign_role", [], await otherWorkspaceRootKey(h, "role-owner"));
    const res = await h.post("/v2/keys.createKey", { apiId: h.apiId, roles: ["foreign_role"] });
    expectError(h, res, 404, "service/data/role_not_found", "Role 'foreign_role' was not found.");
  });
});

describe("412", () => {
  test("recoverable on an API that does not store encrypted keys; nothing is created", async () => {
    const plain = await createApi(h, "no-encryption");
    await h.records.run("UPDATE key_spaces SET store_encrypted_keys = FALSE WHERE id = (SELECT key_space_id FROM apis WHERE id = ?)", plain);
    const before = { keys: await count("keys"), identities: await count("identities") };
    const res = await h.post("/v2/keys.createKey", { apiId: plain, recoverable: true, externalId: "never_made" });
    expectError(h, res, 412, "service/application/precondition_failed", "This API does not support key encryption.");
    expect({ keys: await count("keys"), identities: await count("identities") }).toEqual(before);
    expect((await h.post("/v2/keys.createKey", { apiId: plain })).status).toBe(200);
  });
});
