/** Identities and the named limits of keys and identities on both backends: the same answers for the same writes. */
import { expect, test } from "bun:test";
import { DuplicateRecord, type IdentityListQuery, type RatelimitOwner, type Records } from "../../../src/storage/records/index.ts";
import { step } from "../../../src/storage/work.ts";
import { eachBackend, type TestBackend } from "./backends.ts";

function identity(id: string, externalId: string, workspaceId = "ws_1") {
  return { id, workspaceId, externalId, meta: {}, createdAt: 10 };
}

async function insertIdentities(b: TestBackend, rows: Array<ReturnType<typeof identity>>): Promise<void> {
  await b.records.write("ws_1", function* (r) {
    for (const row of rows) yield r.identities.insert(row);
  });
}

/** A config of `owner` in ws_1 with limit 10 over a day, not auto-applied. */
function config(id: string, owner: RatelimitOwner, name: string) {
  return { id, workspaceId: "ws_1", owner, name, limit: 10, durationMs: 86_400_000, autoApply: false, createdAt: 10 };
}

/** Workspaces ws_1 and ws_2, an API in ws_1 with key key_1, identities id_1, id_2 and id_3 in ws_1. */
async function withOwners(b: TestBackend): Promise<void> {
  await b.workspace("ws_1");
  await b.workspace("ws_2");
  await b.records.write("ws_1", function* (r) {
    yield r.apis.create({ id: "api_1", keySpaceId: "ks_1", workspaceId: "ws_1", name: "shop", createdAt: 1 });
  });
  await b.key({ id: "key_1", workspaceId: "ws_1", keySpaceId: "ks_1" });
  await insertIdentities(b, [identity("id_1", "user_1"), identity("id_2", "user_2"), identity("id_3", "user_3")]);
}

eachBackend((open) => {
  test("an identity is found by id in any workspace, by id in its own workspace and by externalId there, until it is deleted", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await insertIdentities(b, [identity("id_1", "user_1"), identity("id_2", "user_2", "ws_2")]);
    const summary = { id: "id_1", externalId: "user_1", meta: {} };
    const read = <T>(find: (r: Records) => T | Promise<T>) => b.records.read((r) => step(find(r)));
    expect(await read((r) => r.identities.findById("id_1"))).toEqual(summary);
    expect(await read((r) => r.identities.findById("id_2"))).toEqual({ id: "id_2", externalId: "user_2", meta: {} });
    expect(await read((r) => r.identities.findInWorkspace("ws_1", "id_1"))).toEqual(summary);
    expect(await read((r) => r.identities.findInWorkspace("ws_2", "id_1"))).toBeUndefined();
    expect(await read((r) => r.identities.findByExternalId("ws_1", "user_1"))).toEqual(summary);
    expect(await read((r) => r.identities.findByExternalId("ws_2", "user_1"))).toBeUndefined();
    expect(await read((r) => r.identities.findByExternalId("ws_1", "USER_1"))).toBeUndefined();
    expect(await read((r) => r.identities.findByExternalId("ws_1", "id_1"))).toBeUndefined();
    await b.records.write("ws_1", function* (r) {
      yield r.identities.markDeleted("id_1", 20);
    });
    expect(await read((r) => r.identities.findById("id_1"))).toBeUndefined();
    expect(await read((r) => r.identities.findInWorkspace("ws_1", "id_1"))).toBeUndefined();
    expect(await read((r) => r.identities.findByExternalId("ws_1", "user_1"))).toBeUndefined();
    expect(await read((r) => r.identities.findById("id_2"))).toEqual({ id: "id_2", externalId: "user_2", meta: {} });
  });

  test("a live identity's externalId again in its workspace is DuplicateRecord, with nothing of the unit written; not once it is deleted, nor in another workspace", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await insertIdentities(b, [identity("id_1", "user_1")]);
    const duplicate = async () => b.records.write("ws_1", function* (r) {
      yield r.identities.insert(identity("id_2", "other"));
      yield r.identities.insert(identity("id_3", "user_1"));
    });
    await expect(duplicate()).rejects.toBeInstanceOf(DuplicateRecord);
    expect(await b.records.read((r) => step(r.identities.findById("id_2")))).toBeUndefined();
    await insertIdentities(b, [identity("id_4", "user_1", "ws_2"), identity("id_5", "User_1")]);
    await b.records.write("ws_1", function* (r) {
      yield r.identities.markDeleted("id_1", 20);
      yield r.identities.insert(identity("id_6", "user_1"));
    });
    expect(await b.records.read((r) => step(r.identities.findByExternalId("ws_1", "user_1")))).toEqual({ id: "id_6", externalId: "user_1", meta: {} });
  });

  test("an update sets meta as given, non-ASCII text and nested JSON alike, and keeps it when none is given", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await insertIdentities(b, [identity("id_1", "user_1"), identity("id_2", "user_2")]);
    const meta = {
      name: "Zoë · 東京 · 🚀 · \"quoted\" \\ back", plan: { tier: "pro", seats: [1, 2.5, -3, null, true, { "ключ": "значение" }] },
      big: Number.MAX_SAFE_INTEGER, empty: {}, nothing: null,
    };
    const update = (change: { meta?: Record<string, unknown>; updatedAt: number }) => b.records.write("ws_1", function* (r) {
      yield r.identities.update("id_1", change);
    });
    const metaOf = async (id: string) => (await b.records.read((r) => step(r.identities.findById(id))))?.meta;
    await update({ meta, updatedAt: 20 });
    expect(await metaOf("id_1")).toEqual(meta);
    expect(JSON.stringify(await metaOf("id_1"))).toBe(JSON.stringify(meta));
    await update({ updatedAt: 30 });
    expect(await metaOf("id_1")).toEqual(meta);
    await update({ meta: {}, updatedAt: 40 });
    expect(await metaOf("id_1")).toEqual({});
    expect(await metaOf("id_2")).toEqual({});
  });

  test("lists the workspace's live identities by id in byte order from the cursor, up to the limit, searched in id and externalId with ASCII-only case folding", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await insertIdentities(b, [
      identity("id_b", "Zebra"), identity("id_B", "shop-éclair"), identity("id_a", "SHOP"), identity("id_c", "Éclair"),
      identity("id_d", "50%_off"), identity("id_other", "shop", "ws_2"),
    ]);
    await b.records.write("ws_1", function* (r) {
      yield r.identities.markDeleted("id_c", 20);
    });
    const ids = async (query: Partial<IdentityListQuery>) =>
      (await b.records.read((r) => step(r.identities.list({ workspaceId: "ws_1", limit: 10, ...query })))).map((row) => row.id);
    expect(await ids({})).toEqual(["id_B", "id_a", "id_b", "id_d"]);
    expect(await ids({ cursor: "id_a" })).toEqual(["id_a", "id_b", "id_d"]);
    expect(await ids({ cursor: "id_C" })).toEqual(["id_a", "id_b", "id_d"]);
    expect(await ids({ limit: 2 })).toEqual(["id_B", "id_a"]);
    expect(await ids({ workspaceId: "ws_2" })).toEqual(["id_other"]);
    expect(await ids({ search: "shop" })).toEqual(["id_B", "id_a"]);
    expect(await ids({ search: "ID_D" })).toEqual(["id_d"]);
    expect(await ids({ search: "zEBRA" })).toEqual(["id_b"]);
    // SQLite's LIKE folds ASCII letters only: É and é stay apart.
    expect(await ids({ search: "ÉCLAIR" })).toEqual([]);
    expect(await ids({ search: "éclair" })).toEqual(["id_B"]);
    expect(await ids({ search: "%_" })).toEqual(["id_d"]);
    expect(await ids({ search: "shop", cursor: "id_a", limit: 1 })).toEqual(["id_a"]);
  });

  test("listSizes answers list's ids with the UTF-8 bytes of each stored meta; until bounds both lists by id in byte order", async () => {
    const b = await open();
    await b.workspace("ws_1");
    const metas: Record<string, Record<string, unknown>> = { id_b: { note: "é✓🔑", n: 1 }, id_B: {}, id_a: { blob: "x".repeat(70_000) } };
    await insertIdentities(b, Object.entries(metas).map(([id, meta]) => ({ ...identity(id, `user_${id}`), meta })));
    await insertIdentities(b, [identity("id_d", "gone")]);
    await b.records.write("ws_1", function* (r) {
      yield r.identities.markDeleted("id_d", 20);
    });
    const sizes = (query: Partial<IdentityListQuery>) => b.records.read((r) => step(r.identities.listSizes({ workspaceId: "ws_1", limit: 10, ...query })));
    const bytes = (id: string) => Buffer.byteLength(JSON.stringify(metas[id]));
    expect(await sizes({})).toEqual(["id_B", "id_a", "id_b"].map((id) => ({ id, bytes: bytes(id) })));
    expect(await sizes({ cursor: "id_a", limit: 1 })).toEqual([{ id: "id_a", bytes: bytes("id_a") }]);
    expect(await sizes({ until: "id_a" })).toEqual([{ id: "id_B", bytes: 2 }, { id: "id_a", bytes: bytes("id_a") }]);
    expect(await sizes({ search: "USER_ID_B" })).toEqual([{ id: "id_B", bytes: 2 }, { id: "id_b", bytes: bytes("id_b") }]);
    const ids = async (query: Partial<IdentityListQuery>) =>
      (await b.records.read((r) => step(r.identities.list({ workspaceId: "ws_1", limit: 10, ...query })))).map((row) => row.id);
    expect(await ids({ until: "id_a" })).toEqual(["id_B", "id_a"]);
    expect(await ids({ cursor: "id_a", until: "id_a" })).toEqual(["id_a"]);
    expect(await ids({ cursor: "id_a", until: "id_C" })).toEqual([]);
  });

  test("a key's and an identity's named limits load by name in byte order, with every field as written", async () => {
    const b = await open();
    await withOwners(b);
    await b.records.write("ws_1", function* (r) {
      for (const name of ["b", "B", "a"]) yield r.limits.insert(config(`rl_k${name}`, { keyId: "key_1" }, name));
      for (const name of ["z", "Z", "é", "e"]) yield r.limits.insert(config(`rl_i${name}`, { identityId: "id_1" }, name));
      yield r.limits.insert({ ...config("rl_big", { identityId: "id_2" }, "monthly"), limit: 5_000_000_000, durationMs: 2_592_000_000, autoApply: true });
    });
    const load = (owner: RatelimitOwner) => b.records.read((r) => step(r.limits.load(owner)));
    expect((await load({ keyId: "key_1" })).map((c) => c.name)).toEqual(["B", "a", "b"]);
    expect((await load({ identityId: "id_1" })).map((c) => c.name)).toEqual(["Z", "e", "z", "é"]);
    expect(await load({ keyId: "key_1" })).toContainEqual({ id: "rl_ka", name: "a", limit: 10, duration: 86_400_000, autoApply: false });
    expect(await load({ identityId: "id_2" })).toEqual([{ id: "rl_big", name: "monthly", limit: 5_000_000_000, duration: 2_592_000_000, autoApply: true }]);
    expect(await load({ identityId: "id_3" })).toEqual([]);
    expect(await load({ identityId: "key_1" })).toEqual([]);
  });

  test("loadForIdentities answers every identity asked for, its limits by name in byte order, [] for one without", async () => {
    const b = await open();
    await withOwners(b);
    await b.records.write("ws_1", function* (r) {
      for (const name of ["z", "Z", "é", "e"]) yield r.limits.insert(config(`rl_1${name}`, { identityId: "id_1" }, name));
      yield r.limits.insert(config("rl_2", { identityId: "id_2" }, "only"));
      yield r.limits.insert(config("rl_k", { keyId: "key_1" }, "key's"));
    });
    const loaded = await b.records.read((r) => step(r.limits.loadForIdentities(["id_2", "id_1", "id_3", "id_nobody"])));
    expect([...loaded.keys()]).toEqual(["id_2", "id_1", "id_3", "id_nobody"]);
    expect(loaded.get("id_1")!.map((c) => c.name)).toEqual(["Z", "e", "z", "é"]);
    expect(loaded.get("id_2")).toEqual([{ id: "rl_2", name: "only", limit: 10, duration: 86_400_000, autoApply: false }]);
    expect(loaded.get("id_3")).toEqual([]);
    expect(loaded.get("id_nobody")).toEqual([]);
    expect(await b.records.read((r) => step(r.limits.loadForIdentities([])))).toEqual(new Map());
  });

  for (const [ownerKind, owner, other] of [
    ["a key", { keyId: "key_1" }, { identityId: "id_1" }],
    ["an identity", { identityId: "id_1" }, { keyId: "key_1" }],
  ] as Array<[string, RatelimitOwner, RatelimitOwner]>) {
    test(`delete, update and insert change the named limits of ${ownerKind} and of no other owner`, async () => {
      const b = await open();
      await withOwners(b);
      await b.records.write("ws_1", function* (r) {
        for (const name of ["a", "b", "c"]) {
          yield r.limits.insert(config(`rl_${name}`, owner, name));
          yield r.limits.insert(config(`rl_other_${name}`, other, name));
        }
      });
      const load = (o: RatelimitOwner) => b.records.read((r) => step(r.limits.load(o)));
      const otherBefore = await load(other);
      await b.records.write("ws_1", function* (r) {
        yield r.limits.delete(["rl_a", "rl_nobody"]);
        yield r.limits.delete([]);
        yield r.limits.update("rl_b", { limit: 7, durationMs: 3_000_000_000, autoApply: true }, 50);
        yield r.limits.insert({ ...config("rl_new", owner, "a"), autoApply: true });
      });
      expect(await load(owner)).toEqual([
        { id: "rl_new", name: "a", limit: 10, duration: 86_400_000, autoApply: true },
        { id: "rl_b", name: "b", limit: 7, duration: 3_000_000_000, autoApply: true },
        { id: "rl_c", name: "c", limit: 10, duration: 86_400_000, autoApply: false },
      ]);
      expect(await load(other)).toEqual(otherBefore);
      await b.records.write("ws_1", function* (r) {
        yield r.limits.update("rl_b", { limit: 8, durationMs: 1_000, autoApply: false }, 60);
        yield r.limits.delete(["rl_new", "rl_c"]);
      });
      expect(await load(owner)).toEqual([{ id: "rl_b", name: "b", limit: 8, duration: 1_000, autoApply: false }]);
      expect(await load(other)).toEqual(otherBefore);
    });
  }

  test("a unit that throws after writing an identity and its limits leaves neither", async () => {
    const b = await open();
    await b.workspace("ws_1");
    const failing = async () => b.records.write("ws_1", function* (r) {
      yield r.identities.insert(identity("id_1", "user_1"));
      yield r.limits.insert(config("rl_1", { identityId: "id_1" }, "a"));
      throw new Error("after the inserts");
    });
    await expect(failing()).rejects.toThrow("after the inserts");
    expect(await b.records.read((r) => step(r.identities.list({ workspaceId: "ws_1", limit: 10 })))).toEqual([]);
    expect(await b.records.read((r) => step(r.limits.load({ identityId: "id_1" })))).toEqual([]);
  });
});
