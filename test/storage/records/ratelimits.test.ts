/** The records of rate-limit namespaces and overrides on both backends: the same answers for the same writes and queries. */
import { expect, test } from "bun:test";
import { step, type Work } from "../../../src/storage/work.ts";
import type { OverrideRecord, Records } from "../../../src/storage/records/index.ts";
import { DuplicateRecord } from "../../../src/storage/records/index.ts";
import { findNamespaceIn, insertNamespaceIn, loadOverrideRowsIn, upsertOverrideIn } from "../../../src/services/ratelimit/records.ts";
import { eachBackend, type TestBackend } from "./backends.ts";

const MINUTE = 60_000;

/** A namespace `ns_a` ("api") in ws_1, and ws_2 with nothing in it. */
async function withNamespace(open: () => Promise<TestBackend>): Promise<TestBackend> {
  const b = await open();
  await b.workspace("ws_1");
  await b.workspace("ws_2");
  await b.records.write("ws_1", function* (r) {
    yield r.namespaces.insert({ id: "ns_a", workspaceId: "ws_1", name: "api", createdAt: 10 });
  });
  return b;
}

function override(id: string, identifier: string, limit = 1, createdAt = 1) {
  return { id, workspaceId: "ws_1", namespaceId: "ns_a", identifier, limit, durationMs: MINUTE, createdAt };
}

const read = <T>(b: TestBackend, unit: (r: Records) => Work<T>) => b.records.read(unit);

eachBackend((open) => {
  test("a namespace is found by id and by name in its own workspace only, deleted ones included", async () => {
    const b = await withNamespace(open);
    const record = { id: "ns_a", name: "api", deleted: false };
    expect(await read(b, (r) => step(r.namespaces.findById("ws_1", "ns_a")))).toEqual(record);
    expect(await read(b, (r) => step(r.namespaces.findByName("ws_1", "api")))).toEqual(record);
    expect(await read(b, (r) => step(r.namespaces.findById("ws_1", "api")))).toBeUndefined();
    expect(await read(b, (r) => step(r.namespaces.findByName("ws_1", "API")))).toBeUndefined();
    expect(await read(b, (r) => step(r.namespaces.findById("ws_2", "ns_a")))).toBeUndefined();
    expect(await read(b, (r) => step(r.namespaces.findByName("ws_2", "api")))).toBeUndefined();
  });

  test("a namespace's name is taken once per workspace: the second insert answers false and changes nothing", async () => {
    const b = await withNamespace(open);
    const inserted = await b.records.write("ws_1", function* (r) {
      const again = yield* step(r.namespaces.insert({ id: "ns_b", workspaceId: "ws_1", name: "api", createdAt: 20 }));
      const elsewhere = yield* step(r.namespaces.insert({ id: "ns_c", workspaceId: "ws_2", name: "api", createdAt: 20 }));
      return { again, elsewhere };
    });
    expect(inserted).toEqual({ again: false, elsewhere: true });
    expect(await read(b, (r) => step(r.namespaces.findByName("ws_1", "api")))).toEqual({ id: "ns_a", name: "api", deleted: false });
    expect(await read(b, (r) => step(r.namespaces.findById("ws_1", "ns_b")))).toBeUndefined();
  });

  test("lists live namespaces by id in byte order from the cursor, filtered by ids and by an ASCII case-insensitive search", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    const names: Array<[string, string]> = [["ns_b", "Zebra"], ["ns_B", "sms-éclair"], ["ns_a", "SMS"], ["ns_c", "Éclair"], ["ns_d", "50%_off"]];
    await b.records.write("ws_1", function* (r) {
      for (const [id, name] of names) yield r.namespaces.insert({ id, workspaceId: "ws_1", name, createdAt: 5 });
      yield r.namespaces.insert({ id: "ns_other", workspaceId: "ws_2", name: "sms", createdAt: 5 });
    });
    const ids = async (query: { ids?: string[]; cursor?: string; search?: string; limit?: number }) =>
      (await read(b, (r) => step(r.namespaces.list({ workspaceId: "ws_1", ids: query.ids ?? null, limit: query.limit ?? 10, ...query })))).map((row) => row.id);
    expect(await read(b, (r) => step(r.namespaces.list({ workspaceId: "ws_1", ids: null, limit: 1 })))).toEqual([{ id: "ns_B", name: "sms-éclair", createdAt: 5 }]);
    expect(await ids({})).toEqual(["ns_B", "ns_a", "ns_b", "ns_c", "ns_d"]);
    expect(await ids({ cursor: "ns_a" })).toEqual(["ns_a", "ns_b", "ns_c", "ns_d"]);
    expect(await ids({ cursor: "ns_C" })).toEqual(["ns_a", "ns_b", "ns_c", "ns_d"]);
    expect(await ids({ limit: 2 })).toEqual(["ns_B", "ns_a"]);
    expect(await ids({ ids: ["ns_b", "ns_d", "ns_other"] })).toEqual(["ns_b", "ns_d"]);
    expect(await ids({ ids: [] })).toEqual([]);
    expect(await ids({ search: "sms" })).toEqual(["ns_B", "ns_a"]);
    expect(await ids({ search: "NS_D" })).toEqual(["ns_d"]);
    // SQLite's LIKE folds ASCII letters only: É and é stay apart.
    expect(await ids({ search: "ÉCLAIR" })).toEqual(["ns_c"]);
    expect(await ids({ search: "éclair" })).toEqual(["ns_B"]);
    expect(await ids({ search: "%_" })).toEqual(["ns_d"]);
  });

  test("an override is inserted, updated in place and soft-deleted; its identifier can then be used again", async () => {
    const b = await withNamespace(open);
    const find = (identifier: string) => read(b, (r) => step(r.overrides.findLive("ns_a", identifier)));
    await b.records.write("ws_1", function* (r) {
      yield r.overrides.insert(override("rlor_1", "vip", 2 ** 53 - 1, 100));
    });
    expect(await find("vip")).toEqual({ id: "rlor_1", identifier: "vip", limit: 2 ** 53 - 1, duration: MINUTE, createdAt: 100 });
    expect(await find("VIP")).toBeUndefined();
    await b.records.write("ws_1", function* (r) {
      yield r.overrides.update("rlor_1", { limit: 7, durationMs: 1000 }, 200);
    });
    expect(await find("vip")).toEqual({ id: "rlor_1", identifier: "vip", limit: 7, duration: 1000, createdAt: 100 });
    const duplicate = async () => b.records.write("ws_1", function* (r) {
      yield r.overrides.insert(override("rlor_2", "vip"));
    });
    await expect(duplicate()).rejects.toBeInstanceOf(DuplicateRecord);
    await b.records.write("ws_1", function* (r) {
      yield r.overrides.markDeleted("rlor_1", 300);
    });
    expect(await find("vip")).toBeUndefined();
    await duplicate();
    expect(await find("vip")).toEqual({ id: "rlor_2", identifier: "vip", limit: 1, duration: MINUTE, createdAt: 1 });
    expect((await read(b, (r) => step(r.overrides.loadLive("ns_a")))).map((o) => o.id)).toEqual(["rlor_2"]);
  });

  test("the loads of an override index: every live override, the live wildcards alone, and a count that stops at its cap", async () => {
    const b = await withNamespace(open);
    await b.records.write("ws_1", function* (r) {
      yield r.namespaces.insert({ id: "ns_b", workspaceId: "ws_1", name: "other", createdAt: 10 });
      yield r.overrides.insert(override("rlor_1", "user_*"));
      yield r.overrides.insert(override("rlor_2", "user_1"));
      yield r.overrides.insert(override("rlor_3", "*@example.com"));
      yield r.overrides.insert(override("rlor_4", "gone_*"));
      yield r.overrides.insert(override("rlor_5", "plain"));
      yield r.overrides.insert({ ...override("rlor_6", "b_*"), namespaceId: "ns_b" });
      yield r.overrides.markDeleted("rlor_4", 5);
    });
    const ids = (rows: OverrideRecord[]) => rows.map((o) => o.id).sort();
    expect(ids(await read(b, (r) => step(r.overrides.loadLive("ns_a"))))).toEqual(["rlor_1", "rlor_2", "rlor_3", "rlor_5"]);
    expect(ids(await read(b, (r) => step(r.overrides.loadLiveWildcards("ns_a"))))).toEqual(["rlor_1", "rlor_3"]);
    expect(ids(await read(b, (r) => step(r.overrides.loadLiveWildcards("ns_b"))))).toEqual(["rlor_6"]);
    const count = (atMost: number) => read(b, (r) => step(r.overrides.countLive("ns_a", atMost)));
    expect(await count(10)).toBe(4);
    expect(await count(4)).toBe(4);
    expect(await count(3)).toBe(3);
    expect(await count(1)).toBe(1);
    expect(await read(b, (r) => step(r.overrides.countLive("ns_none", 10)))).toBe(0);
  });

  test("lists a namespace's live overrides by id in byte order from the cursor", async () => {
    const b = await withNamespace(open);
    await b.records.write("ws_1", function* (r) {
      for (const id of ["rlor_b", "rlor_B", "rlor_a", "rlor_c", "rlor_é"]) yield r.overrides.insert(override(id, `for_${id}`));
      yield r.overrides.markDeleted("rlor_c", 5);
    });
    const ids = async (page: { limit: number; cursor?: string }) => (await read(b, (r) => step(r.overrides.listLive("ns_a", page)))).map((o) => o.id);
    expect(await ids({ limit: 10 })).toEqual(["rlor_B", "rlor_a", "rlor_b", "rlor_é"]);
    expect(await ids({ limit: 2 })).toEqual(["rlor_B", "rlor_a"]);
    expect(await ids({ limit: 10, cursor: "rlor_a" })).toEqual(["rlor_a", "rlor_b", "rlor_é"]);
    expect(await ids({ limit: 10, cursor: "rlor_C" })).toEqual(["rlor_a", "rlor_b", "rlor_é"]);
    expect(await ids({ limit: 10, cursor: "rlor_z" })).toEqual(["rlor_é"]);
  });

  test("a unit that throws after its writes leaves nothing written", async () => {
    const b = await withNamespace(open);
    const failing = async () => b.records.write("ws_1", function* (r) {
      yield r.namespaces.insert({ id: "ns_b", workspaceId: "ws_1", name: "other", createdAt: 10 });
      yield r.overrides.insert(override("rlor_1", "vip"));
      throw new Error("after the inserts");
    });
    await expect(failing()).rejects.toThrow("after the inserts");
    expect(await read(b, (r) => step(r.namespaces.findById("ws_1", "ns_b")))).toBeUndefined();
    expect(await read(b, (r) => step(r.overrides.loadLive("ns_a")))).toEqual([]);
  });

  test("the service's units: a namespace by id before name, created once; an upsert that keeps the id; an index load that spills past its rows", async () => {
    const b = await withNamespace(open);
    await b.records.write("ws_1", function* (r) {
      // A namespace named like another's id: the id wins.
      yield r.namespaces.insert({ id: "ns_b", workspaceId: "ws_1", name: "ns_a", createdAt: 10 });
    });
    expect(await read(b, (r) => findNamespaceIn(r, "ws_1", "ns_a"))).toEqual({ id: "ns_a", name: "api", deleted: false });
    expect(await read(b, (r) => findNamespaceIn(r, "ws_1", "api"))).toEqual({ id: "ns_a", name: "api", deleted: false });
    expect(await read(b, (r) => findNamespaceIn(r, "ws_2", "api"))).toBeUndefined();
    const created = await b.records.write("ws_1", function* (r) {
      return [yield* insertNamespaceIn(r, "ws_1", "api", 20), yield* insertNamespaceIn(r, "ws_1", "sms", 20)];
    });
    expect(created[0]).toEqual({ namespace: { id: "ns_a", name: "api", deleted: false }, created: false });
    expect(created[1]).toEqual({ namespace: { id: expect.stringMatching(/^rlns_/), name: "sms", deleted: false }, created: true });

    const upsert = (limit: number, nowMs: number) => b.records.write("ws_1", function* (r) {
      const existing = yield* step(r.overrides.findLive("ns_a", "vip_*"));
      return yield* upsertOverrideIn(r, "ws_1", "ns_a", existing, { identifier: "vip_*", limit, duration: MINUTE }, nowMs);
    });
    const inserted = await upsert(5, 100);
    expect(inserted).toEqual({ id: expect.stringMatching(/^rlor_/), identifier: "vip_*", limit: 5, duration: MINUTE, createdAt: 100 });
    expect(await upsert(6, 200)).toEqual({ ...inserted, limit: 6 });
    expect(await read(b, (r) => step(r.overrides.loadLive("ns_a")))).toEqual([{ ...inserted, limit: 6 }]);

    await b.records.write("ws_1", function* (r) {
      for (let i = 0; i < 3; i++) yield r.overrides.insert(override(`rlor_${i}`, `user_${i}`));
    });
    const held = await read(b, (r) => loadOverrideRowsIn(r, "ns_a", 4));
    expect({ spilled: held.spilled, count: held.rows.length }).toEqual({ spilled: false, count: 4 });
    expect(await read(b, (r) => loadOverrideRowsIn(r, "ns_a", 3))).toEqual({ spilled: true, rows: [{ ...inserted, limit: 6 }] });
  });
});
