/**
 * The workspace and root-key records on both backends: the same answers for the same writes and
 * queries, and WorkspaceService over each giving the same answers and errors.
 */
import { expect, test } from "bun:test";
import { step } from "../../../src/storage/work.ts";
import { DuplicateRecord, type NewRootKey } from "../../../src/storage/records/index.ts";
import { WorkspaceService } from "../../../src/services/workspaces/index.ts";
import { sha256Base64 } from "../../../src/lib/hashing.ts";
import { eachBackend, type TestBackend } from "./backends.ts";

const ACTOR = { type: "cli", id: "test" } as const;

function rootKey(id: string, over: Partial<NewRootKey> = {}): NewRootKey {
  return { id, workspaceId: "ws_1", name: id, hash: `hash_${id}`, start: "tg_root_abcde", permissions: ["api.*.read_api"], expiresAt: null, createdAt: 10, ...over };
}

/** The error `run` throws or rejects with (the embedded backend throws at once, the cluster one rejects). */
const rejection = async (run: () => unknown) => {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
};

eachBackend((open, kind) => {
  const workspaceRow = (id: string, name: string, createdAt = 5) => ({ id, name, analyticsEnabled: false, createdAt });
  const insertWorkspaces = (b: TestBackend, rows: Array<ReturnType<typeof workspaceRow>>) => b.records.write(null, function* (r) {
    for (const row of rows) yield r.workspaces.insert(row);
  });

  test("a workspace is found by id, or by name ignoring ASCII case only", async () => {
    const b = await open();
    await insertWorkspaces(b, [workspaceRow("ws_1", "Acme"), workspaceRow("ws_2", "Éclair")]);
    const find = (idOrName: string) => b.records.read((r) => step(r.workspaces.findByIdOrName(idOrName)));
    const acme = { id: "ws_1", name: "Acme", analyticsEnabled: false, createdAt: 5 };
    expect(await find("ws_1")).toEqual(acme);
    expect(await find("ACME")).toEqual(acme);
    expect(await find("acme")).toEqual(acme);
    expect(await find("WS_1")).toBeUndefined();
    expect(await find("ÉCLAIR")).toMatchObject({ id: "ws_2" });
    // SQLite's lower() folds ASCII letters only: É and é stay apart.
    expect(await find("éclair")).toBeUndefined();
    expect(await find("nope")).toBeUndefined();
  });

  test("an id wins over another workspace's name that equals it", async () => {
    const b = await open();
    // Inserted first, so that the name's row comes first in storage order.
    await insertWorkspaces(b, [workspaceRow("ws_2", "ws_1"), workspaceRow("ws_1", "Acme")]);
    expect(await b.records.read((r) => step(r.workspaces.findByIdOrName("ws_1")))).toMatchObject({ id: "ws_1", name: "Acme" });
  });

  test("a second workspace whose name differs only in ASCII case is a DuplicateRecord, and nothing of its unit is kept", async () => {
    const b = await open();
    await insertWorkspaces(b, [workspaceRow("ws_1", "acme")]);
    expect(await rejection(() => insertWorkspaces(b, [workspaceRow("ws_0", "other"), workspaceRow("ws_2", "ACME")]))).toBeInstanceOf(DuplicateRecord);
    expect((await b.records.read((r) => step(r.workspaces.list()))).map((w) => w.id)).toEqual(["ws_1"]);
  });

  test("workspaces list oldest first, ties by id in byte order; any() tells whether one exists", async () => {
    const b = await open();
    expect(await b.records.read((r) => step(r.workspaces.any()))).toBe(false);
    expect(await b.records.read((r) => step(r.workspaces.list()))).toEqual([]);
    await insertWorkspaces(b, [workspaceRow("ws_b", "b", 2), workspaceRow("ws_a", "a", 2), workspaceRow("ws_B", "B2", 2), workspaceRow("ws_z", "z", 1)]);
    expect(await b.records.read((r) => step(r.workspaces.any()))).toBe(true);
    expect((await b.records.read((r) => step(r.workspaces.list()))).map((w) => w.id)).toEqual(["ws_z", "ws_B", "ws_a", "ws_b"]);
  });

  test("analytics opt-in is stored as a boolean and read back as one", async () => {
    const b = await open();
    await insertWorkspaces(b, [workspaceRow("ws_1", "acme")]);
    await b.records.write("ws_1", function* (r) {
      yield r.workspaces.setAnalytics("ws_1", true, 20);
    });
    expect(await b.records.read((r) => step(r.workspaces.findByIdOrName("ws_1")))).toEqual({ id: "ws_1", name: "acme", analyticsEnabled: true, createdAt: 5 });
    await b.records.write("ws_1", function* (r) {
      yield r.workspaces.setAnalytics("ws_1", false, 30);
    });
    expect((await b.records.read((r) => step(r.workspaces.list())))[0]!.analyticsEnabled).toBe(false);
  });

  test("root keys list oldest first (ties by id in byte order), revoked ones too, permissions as stored", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    const permissions = ["api.*.read_api", "api.api_1.create_key", "ratelimit.*.limit"];
    await b.records.write("ws_1", function* (r) {
      yield r.rootKeys.insert(rootKey("rk_b", { permissions }));
      yield r.rootKeys.insert(rootKey("rk_a", { expiresAt: 15 }));
      yield r.rootKeys.insert(rootKey("rk_B", { permissions: [] }));
      yield r.rootKeys.insert(rootKey("rk_old", { createdAt: 1 }));
      yield r.rootKeys.insert(rootKey("rk_other", { workspaceId: "ws_2" }));
      yield r.rootKeys.revoke("rk_a", 12);
    });
    const listed = await b.records.read((r) => step(r.rootKeys.list("ws_1")));
    expect(listed.map((k) => k.id)).toEqual(["rk_old", "rk_B", "rk_a", "rk_b"]);
    expect(listed[1]!.permissions).toEqual([]);
    expect(listed[2]).toEqual({ id: "rk_a", name: "rk_a", start: "tg_root_abcde", permissions: ["api.*.read_api"], createdAt: 10, expiresAt: 15, revokedAt: 12 });
    expect(listed[3]!.permissions).toEqual(permissions);
  });

  test("a revoked root key is no longer found as unrevoked; an unknown id neither", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.records.write("ws_1", function* (r) {
      yield r.rootKeys.insert(rootKey("rk_1"));
    });
    const unrevoked = (id: string) => b.records.read((r) => step(r.rootKeys.findUnrevoked(id)));
    expect(await unrevoked("rk_1")).toEqual({ id: "rk_1", workspaceId: "ws_1", name: "rk_1" });
    expect(await unrevoked("rk_2")).toBeUndefined();
    await b.records.write("ws_1", function* (r) {
      yield r.rootKeys.revoke("rk_1", 20);
    });
    expect(await unrevoked("rk_1")).toBeUndefined();
  });

  test("a root key is found by hash with its workspace's state, revoked and expired ones as they are", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.records.write("ws_1", function* (r) {
      yield r.rootKeys.insert(rootKey("rk_live", { permissions: ["api.*.read_api", "api.*.create_api"] }));
      yield r.rootKeys.insert(rootKey("rk_expired", { expiresAt: 11 }));
      yield r.rootKeys.insert(rootKey("rk_revoked"));
      yield r.rootKeys.revoke("rk_revoked", 12);
    });
    const byHash = (hash: string) => b.records.read((r) => step(r.rootKeys.findByHash(hash)));
    expect(await byHash("hash_rk_live")).toEqual({
      id: "rk_live", name: "rk_live", workspaceId: "ws_1", permissions: ["api.*.read_api", "api.*.create_api"],
      enabled: true, expiresAt: null, revokedAt: null, workspaceEnabled: true,
    });
    expect(await byHash("hash_rk_expired")).toMatchObject({ id: "rk_expired", expiresAt: 11, revokedAt: null });
    expect(await byHash("hash_rk_revoked")).toMatchObject({ id: "rk_revoked", revokedAt: 12 });
    expect(await byHash("HASH_RK_LIVE")).toBeUndefined();
  });

  test("a second root key with a stored hash is a DuplicateRecord", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.records.write("ws_1", function* (r) {
      yield r.rootKeys.insert(rootKey("rk_1"));
    });
    expect(await rejection(() => b.records.write("ws_1", function* (r) {
      yield r.rootKeys.insert(rootKey("rk_2", { hash: "hash_rk_1" }));
    }))).toBeInstanceOf(DuplicateRecord);
  });

  test("WorkspaceService: a name taken ignoring ASCII case is refused; keys are made, listed, found by hash and revoked once", async () => {
    const b = await open();
    const changes: string[] = [];
    const service = new WorkspaceService({ records: b.records, clock: { now: () => 100 }, onChange: () => changes.push("changed") });
    const acme = await service.create({ name: " Acme " }, ACTOR);
    expect(acme).toMatchObject({ name: "Acme", analyticsEnabled: false, createdAt: 100 });
    expect(await rejection(() => service.create({ name: "ACME" }, ACTOR))).toMatchObject({ code: "precondition_failed" });
    expect(await rejection(() => service.create({ name: "a b" }, ACTOR))).toMatchObject({ code: "invalid_input" });
    expect(await service.get("acme")).toEqual(acme);
    expect(await rejection(() => service.get("nope"))).toMatchObject({ code: "workspace_not_found" });
    expect(await service.setAnalytics("ACME", true, ACTOR)).toEqual({ ...acme, analyticsEnabled: true });

    const { id, key } = await service.createRootKey({ workspace: "acme", name: "ci", permissions: ["api.*.read_api", "api.*.read_api"] }, ACTOR);
    expect(await rejection(() => service.createRootKey({ workspace: "nope", name: "x", permissions: [] }, ACTOR))).toMatchObject({ code: "workspace_not_found" });
    expect(await service.listRootKeys(acme.id)).toEqual([{ id, name: "ci", start: key.slice(0, 12), permissions: ["api.*.read_api"], createdAt: 100, expiresAt: null, revokedAt: null }]);
    expect(await b.records.read((r) => step(r.rootKeys.findByHash(sha256Base64(key))))).toMatchObject({ id, workspaceId: acme.id });
    await service.revokeRootKey(id, ACTOR);
    expect(await rejection(() => service.revokeRootKey(id, ACTOR))).toMatchObject({ code: "key_not_found" });
    expect((await service.listRootKeys("Acme"))[0]!.revokedAt).toBe(100);
    expect(changes).toHaveLength(4);
  });

  test("WorkspaceService.bootstrapDefault creates `default` and its key once; a key that cannot be kept stores nothing", async () => {
    const b = await open();
    const service = new WorkspaceService({ records: b.records, clock: { now: () => 100 } });
    const refused = () => service.bootstrapDefault({ permissions: ["api.*.read_api"] }, ACTOR, () => {
      throw new Error("cannot keep it");
    });
    expect(String(await rejection(refused))).toContain("cannot keep it");
    expect(await service.list()).toEqual([]);
    const kept: string[] = [];
    expect(await service.bootstrapDefault({ permissions: ["api.*.read_api"], value: "tg_root_given" }, ACTOR, (key) => kept.push(key))).toBe(true);
    expect(await service.bootstrapDefault({ permissions: ["api.*.read_api"] }, ACTOR, (key) => kept.push(key))).toBe(false);
    expect(kept).toEqual(["tg_root_given"]);
    expect((await service.list()).map((w) => w.name)).toEqual(["default"]);
    expect(await service.listRootKeys("default")).toMatchObject([{ name: "bootstrap", start: "tg_root_give" }]);
  });

  if (kind === "cluster") {
    test("WorkspaceService: racing creates of one name ignoring ASCII case leave one workspace; the others are refused as taken", async () => {
      const b = await open();
      const service = new WorkspaceService({ records: b.records, clock: { now: () => 100 } });
      const names = ["acme", "ACME", "Acme", "aCmE", "acme", "ACME"];
      const outcomes = await Promise.allSettled(names.map((name) => service.create({ name }, ACTOR)));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const codes = outcomes.flatMap((o) => (o.status === "rejected" ? [(o.reason as { code?: string }).code] : []));
      expect(codes).toEqual(Array.from({ length: 5 }, () => "precondition_failed"));
      expect(await service.list()).toHaveLength(1);
    });

    test("WorkspaceService: nodes bootstrapping one empty database at once create one default workspace; the others find it", async () => {
      const b = await open();
      const service = new WorkspaceService({ records: b.records, clock: { now: () => 100 } });
      const kept: string[] = [];
      const outcomes = await Promise.all(Array.from({ length: 6 }, () => service.bootstrapDefault({ permissions: ["api.*.read_api"] }, ACTOR, (key) => kept.push(key))));
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(await service.list()).toHaveLength(1);
    });
  }
});
