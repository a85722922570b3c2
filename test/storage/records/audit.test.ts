/** The audit log's records on both backends: the same entries found, listed, filtered and pruned. */
import { expect, test } from "bun:test";
import type { AuditLogQuery, AuditLogRecord, AuditLogRow } from "../../../src/storage/records/index.ts";
import { step } from "../../../src/storage/work.ts";
import { eachBackend, type TestBackend } from "./backends.ts";

/** An int8-sized time: Unix ms in 2026. */
const T = Date.UTC(2026, 0, 1);

function entry(id: string, time: number, values: Partial<AuditLogRecord> = {}): AuditLogRecord {
  return {
    id, workspaceId: "ws_1", time, event: "api.create", actorType: "root_key", actorId: "rk_1", actorName: null,
    resources: [{ type: "api", id: `api_${id}` }], description: "created", remoteIp: null, userAgent: null, ...values,
  };
}

async function insert(b: TestBackend, rows: AuditLogRow[]): Promise<void> {
  await b.records.write("ws_1", function* (r) {
    for (const row of rows) yield r.audit.insert(row);
  });
}

eachBackend((open) => {
  const ids = async (b: TestBackend, query: Partial<AuditLogQuery>) =>
    (await b.records.read((r) => step(r.audit.list({ workspaceId: "ws_1", liveFromMs: 0, limit: 100, ...query })))).map((row) => row.id);

  test("an entry is found with every field as written, in its own workspace, from the retention cutoff on", async () => {
    const b = await open();
    const full = entry("log_full", T, {
      actorName: "Zoë · 東京", resources: [{ type: "api", id: "api_1", name: "shop 🚀" }, { type: "key", id: "key_1" }],
      description: "\"quoted\" é", remoteIp: "203.0.113.9", userAgent: "curl/8",
    });
    await insert(b, [full, entry("log_bare", T + 1)]);
    const find = (workspaceId: string, logId: string, liveFromMs: number) => b.records.read((r) => step(r.audit.find(workspaceId, logId, liveFromMs)));
    expect(await find("ws_1", "log_full", T)).toStrictEqual(full);
    expect(await find("ws_1", "log_bare", 0)).toStrictEqual(entry("log_bare", T + 1));
    expect(await find("ws_1", "log_full", T + 1)).toBeUndefined();
    expect(await find("ws_2", "log_full", 0)).toBeUndefined();
    expect(await find("ws_1", "log_nobody", 0)).toBeUndefined();
  });

  test("lists newest first, ties on time by log id in byte order, from a cursor entry on, up to the limit", async () => {
    const b = await open();
    await insert(b, [entry("log_a", T), entry("log_B", T), entry("log_b", T), entry("log_Z", T - 1), entry("log_c", T + 1),
      entry("log_other", T, { workspaceId: "ws_2" })]);
    expect(await ids(b, {})).toEqual(["log_c", "log_b", "log_a", "log_B", "log_Z"]);
    expect(await ids(b, { limit: 2 })).toEqual(["log_c", "log_b"]);
    expect(await ids(b, { from: { time: T, id: "log_a" } })).toEqual(["log_a", "log_B", "log_Z"]);
    // A position between two ids: from "log_C" on, by bytes, is "log_B" on.
    expect(await ids(b, { from: { time: T, id: "log_C" } })).toEqual(["log_B", "log_Z"]);
    expect(await ids(b, { from: { time: T + 1, id: "log_a" } })).toEqual(["log_b", "log_a", "log_B", "log_Z"]);
    expect(await ids(b, { liveFromMs: T })).toEqual(["log_c", "log_b", "log_a", "log_B"]);
    expect(await ids(b, { workspaceId: "ws_2" })).toEqual(["log_other"]);
  });

  test("filters by event, actor, since and until (inclusive), each and together", async () => {
    const b = await open();
    await insert(b, [
      entry("log_1", T, { event: "key.create", actorId: "rk_1" }),
      entry("log_2", T + 1, { event: "key.create", actorId: "rk_2" }),
      entry("log_3", T + 2, { event: "api.create", actorId: "rk_2" }),
    ]);
    expect(await ids(b, { event: "key.create" })).toEqual(["log_2", "log_1"]);
    expect(await ids(b, { event: "KEY.CREATE" })).toEqual([]);
    expect(await ids(b, { actorId: "rk_2" })).toEqual(["log_3", "log_2"]);
    expect(await ids(b, { since: T + 1 })).toEqual(["log_3", "log_2"]);
    expect(await ids(b, { until: T + 1 })).toEqual(["log_2", "log_1"]);
    expect(await ids(b, { since: T + 1, until: T + 1 })).toEqual(["log_2"]);
    expect(await ids(b, { event: "key.create", actorId: "rk_2", since: T })).toEqual(["log_2"]);
  });

  test("the resource filter matches a resource's string id exactly, and no number id", async () => {
    const b = await open();
    const numbered = [{ type: "legacy", id: 123 }] as unknown as AuditLogRecord["resources"];
    await insert(b, [
      entry("log_1", T, { resources: [{ type: "api", id: "api_1", name: "key_9" }, { type: "key", id: "123" }] }),
      entry("log_2", T + 1, { resources: numbered }),
      entry("log_3", T + 2, { resources: [{ type: "key", id: "Key_é" }] }),
      entry("log_4", T + 3, { resources: [] }),
    ]);
    expect(await ids(b, { resourceId: "api_1" })).toEqual(["log_1"]);
    expect(await ids(b, { resourceId: "123" })).toEqual(["log_1"]);
    expect(await ids(b, { resourceId: "key_9" })).toEqual([]);
    expect(await ids(b, { resourceId: "Key_é" })).toEqual(["log_3"]);
    expect(await ids(b, { resourceId: "key_é" })).toEqual([]);
    expect(await ids(b, { resourceId: "api" })).toEqual([]);
  });

  test("a prune deletes the entries before the cutoff in every workspace and answers how many", async () => {
    const b = await open();
    await insert(b, [entry("log_1", T - 1), entry("log_2", T - 1, { workspaceId: "ws_2" }), entry("log_3", T), entry("log_4", T + 1)]);
    const prune = (cutoffMs: number) => b.records.write(null, (r) => step(r.audit.deleteBefore(cutoffMs)));
    expect(await prune(T - 1)).toBe(0);
    expect(await prune(T)).toBe(2);
    expect(await ids(b, {})).toEqual(["log_4", "log_3"]);
    expect(await ids(b, { workspaceId: "ws_2" })).toEqual([]);
    expect(await prune(T)).toBe(0);
  });

  test("a unit that throws after writing an entry leaves none", async () => {
    const b = await open();
    const failing = async () => b.records.write("ws_1", function* (r) {
      yield r.audit.insert(entry("log_1", T));
      throw new Error("after the insert");
    });
    await expect(failing()).rejects.toThrow("after the insert");
    expect(await ids(b, {})).toEqual([]);
  });
});
