/** The API records on both backends: the same answers for the same writes and queries. */
import { expect, test } from "bun:test";
import { step } from "../../../src/storage/work.ts";
import { eachBackend } from "./backends.ts";

const API = { id: "api_a", keySpaceId: "ks_a", workspaceId: "ws_1", name: "shop", createdAt: 10 };

eachBackend((open, kind) => {
  test("an API is found by id and by key space in its own workspace only, until it is deleted", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await b.records.write("ws_1", function* (r) {
      yield r.apis.create(API);
    });
    const record = { id: "api_a", name: "shop", keySpaceId: "ks_a", deleteProtection: false };
    expect(await b.records.read((r) => step(r.apis.findLive("ws_1", "api_a")))).toEqual(record);
    expect(await b.records.read((r) => step(r.apis.findByKeySpace("ws_1", "ks_a")))).toEqual(record);
    expect(await b.records.read((r) => step(r.apis.findLive("ws_2", "api_a")))).toBeUndefined();
    expect(await b.records.read((r) => step(r.apis.findByKeySpace("ws_2", "ks_a")))).toBeUndefined();
    await b.records.write("ws_1", function* (r) {
      yield r.apis.markDeleted("api_a", 20);
    });
    expect(await b.records.read((r) => step(r.apis.findLive("ws_1", "api_a")))).toBeUndefined();
    expect(await b.records.read((r) => step(r.apis.findByKeySpace("ws_1", "ks_a")))).toBeUndefined();
  });

  test("a unit that throws leaves nothing written", async () => {
    const b = await open();
    await b.workspace("ws_1");
    const failing = async () => b.records.write("ws_1", function* (r) {
      yield r.apis.create(API);
      throw new Error("after the insert");
    });
    await expect(failing()).rejects.toThrow("after the insert");
    expect(await b.records.read((r) => step(r.apis.list({ workspaceId: "ws_1", ids: null, limit: 10 })))).toEqual([]);
  });

  test("lists by id in byte order from the cursor, filtered by ids and by an ASCII case-insensitive search", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    const names: Array<[string, string]> = [["api_b", "Zebra"], ["api_B", "shop-éclair"], ["api_a", "SHOP"], ["api_c", "Éclair"], ["api_d", "50%_off"]];
    await b.records.write("ws_1", function* (r) {
      for (const [id, name] of names) yield r.apis.create({ id, keySpaceId: `ks_${id}`, workspaceId: "ws_1", name, createdAt: 1 });
      yield r.apis.create({ id: "api_other", keySpaceId: "ks_other", workspaceId: "ws_2", name: "shop", createdAt: 1 });
      yield r.apis.markDeleted("api_c", 2);
    });
    const ids = async (query: { ids?: string[]; cursor?: string; search?: string; limit?: number }) =>
      (await b.records.read((r) => step(r.apis.list({ workspaceId: "ws_1", ids: query.ids ?? null, limit: query.limit ?? 10, ...query })))).map((row) => row.id);
    expect(await ids({})).toEqual(["api_B", "api_a", "api_b", "api_d"]);
    expect(await ids({ cursor: "api_a" })).toEqual(["api_a", "api_b", "api_d"]);
    expect(await ids({ cursor: "api_C" })).toEqual(["api_a", "api_b", "api_d"]);
    expect(await ids({ limit: 2 })).toEqual(["api_B", "api_a"]);
    expect(await ids({ ids: ["api_b", "api_d", "api_c", "api_other"] })).toEqual(["api_b", "api_d"]);
    expect(await ids({ ids: [] })).toEqual([]);
    expect(await ids({ search: "shop" })).toEqual(["api_B", "api_a"]);
    expect(await ids({ search: "API_D" })).toEqual(["api_d"]);
    // SQLite's LIKE folds ASCII letters only: É and é stay apart.
    expect(await ids({ search: "ÉCLAIR" })).toEqual([]);
    expect(await ids({ search: "éclair" })).toEqual(["api_B"]);
    expect(await ids({ search: "%_" })).toEqual(["api_d"]);
  });

  if (kind === "cluster") {
    // READ COMMITTED: a unit that reads a record and then changes it takes the record's lock first.
    test("units racing on one row, each locking it before reading it, run one after another: each sees the other's commit", async () => {
      const b = await open();
      await b.workspace("ws_1");
      await b.records.write("ws_1", function* (r) {
        yield r.apis.create(API);
      });
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => b.records.write("ws_1", function* (r) {
        yield r.locks.hold({ workspaceId: "ws_1", kind: "api", id: "api_a" });
        const api = yield* step(r.apis.findLive("ws_1", "api_a"));
        if (!api) throw new Error("already deleted");
        yield r.apis.markDeleted(api.id, 30);
      })));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const reasons = outcomes.flatMap((o) => (o.status === "rejected" ? [String(o.reason)] : []));
      expect(reasons).toEqual(Array.from({ length: 7 }, () => "Error: already deleted"));
    });
  }
});
