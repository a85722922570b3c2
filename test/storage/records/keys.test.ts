/**
 * The key records on both backends: the same rows and answers for the same writes and queries. The
 * PostgreSQL databases sort by an ICU locale, where only an explicit byte comparison gives SQLite's order.
 */
import { expect, test } from "bun:test";
import { DuplicateRecord, type KeyRecord, type NewKeyRecord, type Records } from "../../../src/storage/records/index.ts";
import { step, type Work } from "../../../src/storage/work.ts";
import { eachBackend, type TestBackend } from "./backends.ts";

const WS = "ws_1";
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function newKey(id: string, fields: Partial<NewKeyRecord> = {}): NewKeyRecord {
  return {
    id, workspaceId: WS, keySpaceId: "ks_a", hash: `hash_${id}`, start: "sk_ab", name: null, identityId: null, meta: null,
    expiresAt: null, enabled: true, remaining: null, refillAmount: null, refillDay: null, lastRefillAt: null,
    recoverable: false, encrypted: null, createdAt: 100, ...fields,
  };
}

const stored = (row: NewKeyRecord): KeyRecord => ({ ...row, updatedAt: null, lastUsedAt: null, deletedAt: null });

/** Two workspaces, an API with key space ks_a in ws_1 and ks_b in ws_2, and `keys` inserted. */
async function seeded(open: () => Promise<TestBackend>, keys: NewKeyRecord[] = []): Promise<TestBackend> {
  const b = await open();
  await b.workspace(WS);
  await b.workspace("ws_2");
  await b.records.write(WS, function* (r) {
    yield r.apis.create({ id: "api_a", keySpaceId: "ks_a", workspaceId: WS, name: "a", createdAt: 1 });
    yield r.apis.create({ id: "api_b", keySpaceId: "ks_b", workspaceId: "ws_2", name: "b", createdAt: 1 });
    for (const k of keys) yield r.keys.insert(k);
  });
  return b;
}

const read = <T>(b: TestBackend, unit: (r: Records) => Work<T>) => b.records.read(unit);

eachBackend((open) => {
  test("a key is found by id and by hash in its own workspace, with every column as written, until it is deleted", async () => {
    const meta = { plan: "pro", seats: 3, ok: true, none: null, nested: { list: [1, "zwei", { drei: 3 }] }, "ключ": "значение ✓", emoji: "🔑" };
    const full = newKey("key_full", {
      name: "Ünïcode name", meta, expiresAt: 4_102_444_800_000, enabled: false, remaining: MAX_SAFE, refillAmount: MAX_SAFE - 1,
      refillDay: 31, lastRefillAt: 1_700_000_000_000, recoverable: true, encrypted: "c2VhbGVk", start: "pfx_Zz9a",
    });
    const bare = newKey("key_bare", { meta: {} });
    const b = await seeded(open, [full, bare]);
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_full")))).toEqual(stored(full));
    expect(await read(b, (r) => step(r.keys.findByHash(WS, "hash_key_full")))).toEqual(stored(full));
    const bareRow = await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_bare")));
    expect(bareRow).toEqual(stored(bare));
    expect(bareRow?.name).toBeNull();
    expect(bareRow?.enabled).toBe(true);
    expect(bareRow?.recoverable).toBe(false);
    expect(await read(b, (r) => step(r.keys.findInWorkspace("ws_2", "key_full")))).toBeUndefined();
    expect(await read(b, (r) => step(r.keys.findByHash("ws_2", "hash_key_full")))).toBeUndefined();
    await b.records.write(WS, function* (r) {
      yield r.keys.update("key_full", { deletedAt: 500 });
    });
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_full")))).toBeUndefined();
    expect(await read(b, (r) => step(r.keys.findByHash(WS, "hash_key_full")))).toBeUndefined();
  });

  test("a second key with a stored hash is DuplicateRecord, and its unit writes nothing", async () => {
    const b = await seeded(open, [newKey("key_1")]);
    const duplicate = async () => b.records.write(WS, function* (r) {
      yield r.keys.insert(newKey("key_2"));
      yield r.keys.insert(newKey("key_3", { hash: "hash_key_1" }));
    });
    await expect(duplicate()).rejects.toBeInstanceOf(DuplicateRecord);
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_2")))).toBeUndefined();
  });

  test("update sets the given columns only; null clears one", async () => {
    const b = await seeded(open, [newKey("key_1", { name: "old", meta: { a: 1 }, remaining: 5, expiresAt: 900 })]);
    await b.records.write(WS, function* (r) {
      yield r.keys.update("key_1", { name: null, meta: { b: "é" }, enabled: false, updatedAt: 200 });
    });
    const row = await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_1")));
    expect(row).toMatchObject({ name: null, meta: { b: "é" }, enabled: false, updatedAt: 200, remaining: 5, expiresAt: 900 });
  });

  test("lists a key space's live keys by id in byte order from the cursor, by identity when asked", async () => {
    const ids = ["key_b", "key_B", "key_a", "key_é", "key_Z", "key_gone"];
    const b = await seeded(open);
    await b.records.write(WS, function* (r) {
      yield r.identities.insert({ id: "id_1", workspaceId: WS, externalId: "alice", meta: {}, createdAt: 1 });
      for (const id of ids) yield r.keys.insert(newKey(id, { identityId: id === "key_a" || id === "key_é" ? "id_1" : null }));
      yield r.keys.insert(newKey("key_other", { workspaceId: "ws_2", keySpaceId: "ks_b" }));
      yield r.keys.update("key_gone", { deletedAt: 1 });
    });
    const list = async (query: { cursor?: string; identityId?: string; limit?: number }) =>
      (await read(b, (r) => step(r.keys.list({ keySpaceId: "ks_a", limit: query.limit ?? 10, ...query })))).map((k) => k.id);
    expect(await list({})).toEqual(["key_B", "key_Z", "key_a", "key_b", "key_é"]);
    expect(await list({ limit: 2 })).toEqual(["key_B", "key_Z"]);
    expect(await list({ cursor: "key_Z", limit: 2 })).toEqual(["key_Z", "key_a"]);
    expect(await list({ cursor: "key_c" })).toEqual(["key_é"]);
    expect(await list({ cursor: "key_z" })).toEqual(["key_é"]);
    expect(await list({ identityId: "id_1" })).toEqual(["key_a", "key_é"]);
    expect(await list({ identityId: "id_1", cursor: "key_b" })).toEqual(["key_é"]);
  });

  test("listSizes answers list's ids with the bytes of each key's meta and its live identity's; until bounds both lists", async () => {
    const keyMeta = { plan: "pro ✓", blob: "y".repeat(50_000) };
    const identityMeta = { team: "Ünïcode", n: 3 };
    const b = await seeded(open);
    await b.records.write(WS, function* (r) {
      yield r.identities.insert({ id: "id_1", workspaceId: WS, externalId: "alice", meta: identityMeta, createdAt: 1 });
      yield r.identities.insert({ id: "id_2", workspaceId: WS, externalId: "bob", meta: { gone: true }, createdAt: 1 });
      yield r.identities.markDeleted("id_2", 2);
      yield r.keys.insert(newKey("key_a", { meta: keyMeta, identityId: "id_1" }));
      yield r.keys.insert(newKey("key_b", { identityId: "id_1" }));
      yield r.keys.insert(newKey("key_c", { meta: keyMeta, identityId: "id_2" }));
      yield r.keys.insert(newKey("key_d"));
    });
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    const sizes = (query: { cursor?: string; until?: string; identityId?: string }) =>
      read(b, (r) => step(r.keys.listSizes({ keySpaceId: "ks_a", limit: 10, ...query })));
    expect(await sizes({})).toEqual([
      { id: "key_a", bytes: bytes(keyMeta) + bytes(identityMeta) }, { id: "key_b", bytes: bytes(identityMeta) },
      { id: "key_c", bytes: bytes(keyMeta) }, { id: "key_d", bytes: 0 },
    ]);
    expect(await sizes({ identityId: "id_1", cursor: "key_b" })).toEqual([{ id: "key_b", bytes: bytes(identityMeta) }]);
    expect((await sizes({ until: "key_b" })).map((row) => row.id)).toEqual(["key_a", "key_b"]);
    const ids = async (query: { cursor?: string; until?: string }) =>
      (await read(b, (r) => step(r.keys.list({ keySpaceId: "ks_a", limit: 10, ...query })))).map((k) => k.id);
    expect(await ids({ cursor: "key_b", until: "key_c" })).toEqual(["key_b", "key_c"]);
    expect(await ids({ until: "key_" })).toEqual([]);
  });

  test("credit changes: set columns, increment up to the cap, decrement down to 0, with int8 balances", async () => {
    const b = await seeded(open, [newKey("key_1", { remaining: MAX_SAFE - 10, refillAmount: 7, refillDay: 3 })]);
    const change = (c: Parameters<Records["keys"]["changeCredits"]>[1], keyId = "key_1") =>
      b.records.write(WS, (r) => step(r.keys.changeCredits(keyId, c)));
    expect(await change({ increment: 100, max: MAX_SAFE })).toEqual({ remaining: MAX_SAFE, refillAmount: 7, refillDay: 3 });
    expect(await change({ decrement: 5 })).toEqual({ remaining: MAX_SAFE - 5, refillAmount: 7, refillDay: 3 });
    expect(await change({ decrement: MAX_SAFE })).toEqual({ remaining: 0, refillAmount: 7, refillDay: 3 });
    expect(await change({ increment: 4, max: MAX_SAFE })).toEqual({ remaining: 4, refillAmount: 7, refillDay: 3 });
    expect(await change({ set: { remaining: 12 } })).toEqual({ remaining: 12, refillAmount: 7, refillDay: 3 });
    expect(await change({ set: { remaining: null, refillAmount: null, refillDay: null } })).toEqual({ remaining: null, refillAmount: null, refillDay: null });
    expect(await change({ set: { remaining: 1 } }, "key_missing")).toBeUndefined();
  });

  test("permission and role links: added once, listed in byte order, removed; roles with their permissions", async () => {
    const b = await seeded(open, [newKey("key_1"), newKey("key_2")]);
    await b.role({ id: "role_w", workspaceId: WS, name: "writer", description: "Writes", createdAt: 1 });
    await b.role({ id: "role_R", workspaceId: WS, name: "Reader", description: null, createdAt: 1 });
    await b.records.write(WS, function* (r) {
      for (const [id, slug, description] of [["perm_1", "docs.read", null], ["perm_2", "Docs.write", "Write ✓"], ["perm_3", "b.z", null]] as const) {
        yield r.rbac.insertPermission({ id, workspaceId: WS, name: slug, slug, description, createdAt: 1 });
      }
      yield r.rbac.setRolePermissions(WS, "role_w", ["perm_1", "perm_2"], 1);
      yield r.keys.addPermissions(WS, "key_1", ["perm_1", "perm_3"], 5);
      yield r.keys.addPermissions(WS, "key_1", ["perm_1", "perm_2"], 6);
      yield r.keys.addPermissions(WS, "key_1", [], 6);
      yield r.keys.addRoles(WS, "key_1", ["role_w", "role_R"], 5);
      yield r.keys.addRoles(WS, "key_1", ["role_w"], 6);
      yield r.keys.addPermissions(WS, "key_2", ["perm_1"], 5);
    });
    expect((await read(b, (r) => step(r.keys.permissionsOf("key_1")))).map((p) => p.slug)).toEqual(["Docs.write", "b.z", "docs.read"]);
    expect((await read(b, (r) => step(r.keys.permissionsOf("key_1"))))[0]).toEqual({ id: "perm_2", name: "Docs.write", slug: "Docs.write", description: "Write ✓" });
    expect(await read(b, (r) => step(r.keys.rolesOf("key_1")))).toEqual([
      { id: "role_R", name: "Reader", description: null }, { id: "role_w", name: "writer", description: "Writes" },
    ]);
    expect((await read(b, (r) => step(r.keys.permissionsOfRoles(["role_w", "role_R"])))).map((p) => [p.roleId, p.slug]))
      .toEqual([["role_w", "Docs.write"], ["role_w", "docs.read"]]);
    expect(await read(b, (r) => step(r.keys.permissionsOfRoles([])))).toEqual([]);
    expect((await read(b, (r) => step(r.keys.permissionIdsOf("key_1")))).sort()).toEqual(["perm_1", "perm_2", "perm_3"]);
    expect((await read(b, (r) => step(r.keys.roleIdsOf("key_1")))).sort()).toEqual(["role_R", "role_w"]);
    await b.records.write(WS, function* (r) {
      yield r.keys.removePermissions("key_1", ["perm_1", "perm_2"]);
      yield r.keys.removeRoles("key_1", ["role_w"]);
    });
    expect(await read(b, (r) => step(r.keys.permissionIdsOf("key_1")))).toEqual(["perm_3"]);
    expect(await read(b, (r) => step(r.keys.roleIdsOf("key_1")))).toEqual(["role_R"]);
    expect(await read(b, (r) => step(r.keys.permissionIdsOf("key_2")))).toEqual(["perm_1"]);
  });

  test("a permission is found by id, else by slug ignoring ASCII case only, in its workspace", async () => {
    const b = await seeded(open);
    await b.records.write(WS, function* (r) {
      yield r.rbac.insertPermission({ id: "perm_a", workspaceId: WS, name: "Crème.Read", slug: "Crème.Read", description: null, createdAt: 1 });
      yield r.rbac.insertPermission({ id: "perm_b", workspaceId: WS, name: "perm_a_slug", slug: "perm_A", description: null, createdAt: 1 });
      yield r.rbac.insertPermission({ id: "perm_c", workspaceId: "ws_2", name: "other", slug: "other", description: null, createdAt: 1 });
    });
    const byRef = (ref: string, ws = WS) => read(b, (r) => step(r.keys.permissionIdByRef(ws, ref)));
    expect(await byRef("perm_a")).toBe("perm_a");
    expect(await byRef("PERM_A")).toBe("perm_b");
    expect(await byRef("crème.read")).toBe("perm_a");
    expect(await byRef("CRÈME.READ")).toBeUndefined();
    expect(await byRef("perm_c")).toBeUndefined();
    expect(await byRef("other")).toBeUndefined();
  });

  test("a permanent delete removes the key with its permission and role links and its limits, and no other key's", async () => {
    const b = await seeded(open, [newKey("key_1"), newKey("key_2")]);
    await b.role({ id: "role_1", workspaceId: WS, name: "r", description: null, createdAt: 1 });
    await b.records.write(WS, function* (r) {
      yield r.rbac.insertPermission({ id: "perm_1", workspaceId: WS, name: "p", slug: "p", description: null, createdAt: 1 });
      for (const keyId of ["key_1", "key_2"]) {
        yield r.keys.addPermissions(WS, keyId, ["perm_1"], 1);
        yield r.keys.addRoles(WS, keyId, ["role_1"], 1);
        yield r.limits.insert({ id: `rl_${keyId}`, workspaceId: WS, owner: { keyId }, name: "calls", limit: 5, durationMs: 1000, autoApply: true, createdAt: 1 });
      }
      yield r.keys.deletePermanently("key_1");
    });
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_1")))).toBeUndefined();
    expect(await read(b, (r) => step(r.keys.permissionIdsOf("key_1")))).toEqual([]);
    expect(await read(b, (r) => step(r.keys.roleIdsOf("key_1")))).toEqual([]);
    expect(await read(b, (r) => step(r.limits.load({ keyId: "key_1" })))).toEqual([]);
    expect(await read(b, (r) => step(r.keys.permissionIdsOf("key_2")))).toEqual(["perm_1"]);
    expect(await read(b, (r) => step(r.keys.roleIdsOf("key_2")))).toEqual(["role_1"]);
    expect((await read(b, (r) => step(r.limits.load({ keyId: "key_2" })))).map((l) => l.id)).toEqual(["rl_key_2"]);
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_2")))).toBeDefined();
  });

  test("refills: live keys with a refill are candidates; a refill raises remaining to the amount, never lowers it", async () => {
    const b = await seeded(open, [
      newKey("key_low", { remaining: 2, refillAmount: MAX_SAFE, refillDay: null, lastRefillAt: 10 }),
      newKey("key_high", { remaining: 50, refillAmount: 10, refillDay: 15, lastRefillAt: null }),
      newKey("key_none", { remaining: 3 }),
      newKey("key_deleted", { remaining: 1, refillAmount: 5 }),
      newKey("key_other", { workspaceId: "ws_2", keySpaceId: "ks_b", remaining: 0, refillAmount: 4 }),
    ]);
    await b.records.write(WS, (r) => step(r.keys.update("key_deleted", { deletedAt: 1 })));
    const candidates = await read(b, (r) => step(r.keys.refillCandidates()));
    expect(candidates.sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([
      { id: "key_high", workspaceId: WS, refillDay: 15, lastRefillAt: null },
      { id: "key_low", workspaceId: WS, refillDay: null, lastRefillAt: 10 },
      { id: "key_other", workspaceId: "ws_2", refillDay: null, lastRefillAt: null },
    ]);
    await b.records.write(WS, function* (r) {
      yield r.keys.refill("key_low", 1_000);
      yield r.keys.refill("key_high", 1_000);
    });
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_low")))).toMatchObject({ remaining: MAX_SAFE, lastRefillAt: 1_000 });
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_high")))).toMatchObject({ remaining: 50, lastRefillAt: 1_000 });
  });

  test("a key space's settings; a workspace's data key is stored once and the first one kept", async () => {
    const b = await seeded(open);
    expect(await read(b, (r) => step(r.keys.findKeySpace("ks_a")))).toEqual({ id: "ks_a", defaultPrefix: null, defaultBytes: null, storeEncryptedKeys: true });
    expect(await read(b, (r) => step(r.keys.findKeySpace("ks_missing")))).toBeUndefined();
    expect(await read(b, (r) => step(r.keys.findDataKey(WS)))).toBeUndefined();
    await b.records.write(WS, function* (r) {
      yield r.keys.insertDataKey({ workspaceId: WS, encrypted: "first", createdAt: 1 });
      yield r.keys.insertDataKey({ workspaceId: WS, encrypted: "second", createdAt: 2 });
    });
    expect(await read(b, (r) => step(r.keys.findDataKey(WS)))).toBe("first");
    expect(await read(b, (r) => step(r.keys.findDataKey("ws_2")))).toBeUndefined();
  });

  test("a unit that throws after key writes leaves nothing written", async () => {
    const b = await seeded(open, [newKey("key_1", { remaining: 5 })]);
    const failing = async () => b.records.write(WS, function* (r) {
      yield r.keys.insert(newKey("key_2"));
      yield r.keys.changeCredits("key_1", { decrement: 5 });
      throw new Error("after the writes");
    });
    await expect(failing()).rejects.toThrow("after the writes");
    expect(await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_2")))).toBeUndefined();
    expect((await read(b, (r) => step(r.keys.findInWorkspace(WS, "key_1"))))?.remaining).toBe(5);
  });
});
