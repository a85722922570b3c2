/**
 * The audit log read and pruned by AuditService on the cluster backend (PostgreSQL) gives exactly
 * its answers on the embedded backend (SQLite), for a data dir filled through the real API and
 * copied into PostgreSQL: every filter alone and combined, every page size walked to the end
 * through the cursor, unknown, expired and cross-workspace cursors and log ids, since/until
 * edges, retention by the clock, and the rows a prune deletes. The data set gets, through the API, batches of
 * entries sharing one time (so that the log id decides their order; base58 ids sort differently
 * by bytes and by locale), from several root keys and events, a day apart. The PostgreSQL database
 * sorts by an ICU locale, so that only an explicit byte order gives SQLite's order.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { SQL } from "bun";
import { AppError } from "../../src/errors/app-error.ts";
import { AuditService, type ListLogsInput } from "../../src/services/audit/index.ts";
import type { Principal } from "../../src/services/auth/index.ts";
import { DATABASE_FILE } from "../../src/storage/data-dir.ts";
import { openStorage, type Storage } from "../../src/storage/db.ts";
import { copyDataDirToPostgres } from "../../src/storage/pg/copy-from-sqlite.ts";
import { openPg } from "../../src/storage/pg/db.ts";
import { clusterRecords } from "../../src/storage/pg/records/index.ts";
import { embeddedRecords } from "../../src/storage/records/index.ts";
import { startHarness } from "../support/harness.ts";
import { TestClock } from "../support/test-clock.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { buildEmbeddedDataSet, type EmbeddedDataSet } from "./embedded-data-set.ts";
import { postgresForFile } from "./pg-database.ts";

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 90;
/** Batches of entries, a day apart: the last at the clock's latest time, the one before it at the retention cutoffs the tests set. */
const BATCHES = 3;

/** Batches of entries a day apart, each at one time, by two root keys and several events. */
async function addAuditCases(set: EmbeddedDataSet): Promise<void> {
  const h = await startHarness({ env: { TOLLGATE_DATA_DIR: set.dataDir, TOLLGATE_MASTER_KEY: set.masterKey.toString("base64") } });
  const actors = [
    await h.rootKeyWith(["api.*.create_api", "api.*.create_key", "api.*.delete_key", "identity.*.create_identity"]),
    await h.rootKeyWith(["api.*.create_api", "rbac.*.create_permission", "rbac.*.create_role", "rbac.*.add_permission_to_role"]),
  ];
  const call = async (path: string, body: unknown, key: string) => {
    const res = await h.post(path, body, { key });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  for (let batch = 0; batch < BATCHES; batch++) {
    h.clock.advance(DAY_MS);
    for (let i = 0; i < 3; i++) {
      const [first, second] = actors as [string, string];
      const { apiId } = await call("/v2/apis.createApi", { name: `api ${batch} ${i}` }, i % 2 === 0 ? first : second);
      const { keyId } = await call("/v2/keys.createKey", { apiId, name: `key ${batch} ${i}` }, first);
      if (i === 1) await call("/v2/keys.deleteKey", { keyId }, first);
      await call("/v2/identities.createIdentity", { externalId: `user_${batch}_${i}` }, first);
      await call("/v2/permissions.createPermission", { name: `p ${batch} ${i}`, slug: `p${batch}.${i}` }, second);
      await call("/v2/permissions.createRole", { name: `r_${batch}_${i}`, permissions: [`p${batch}.${i}`] }, second);
    }
  }
  await h.running.stop();
  rmSync(h.dataDir, { recursive: true, force: true });
}

interface StoredEntry { id: string; workspaceId: string; time: number; event: string; actorId: string; resources: string }

/** The outcome of a call: its value, or the code of the AppError it threw. */
async function outcome<T>(run: () => T | Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await run() };
  } catch (e) {
    if (e instanceof AppError) return { error: e.code };
    throw e;
  }
}

describe.skipIf(skipWithout(missing.postgres(), "the audit log on PostgreSQL"))("the audit log on both backends", () => {
  let closePg: (() => Promise<void>) | undefined;
  const pg = postgresForFile(async () => {
    await closePg?.();
  });
  const clock = new TestClock();
  let set: EmbeddedDataSet | undefined;
  let storage: Storage | undefined;
  let sqliteAudit: AuditService;
  let pgAudit: AuditService;
  let localeSql: SQL;
  let entries: StoredEntry[];
  let principals: Principal[];

  beforeAll(async () => {
    set = await buildEmbeddedDataSet();
    await addAuditCases(set);
    const url = await pg.localeDatabase("en-US");
    localeSql = pg.client(url, 2);
    await copyDataDirToPostgres(set.dataDir, url);
    storage = openStorage(join(set.dataDir, DATABASE_FILE));
    sqliteAudit = new AuditService({ records: embeddedRecords(storage), clock, retentionDays: RETENTION_DAYS });
    const cluster = openPg(url, 2);
    closePg = cluster.close;
    pgAudit = new AuditService({ records: clusterRecords(cluster.db), clock, retentionDays: RETENTION_DAYS });
    entries = storage.sqlite.query<StoredEntry, []>(
      "SELECT id, workspace_id AS workspaceId, time, event, actor_id AS actorId, resources FROM audit_logs ORDER BY time, id",
    ).all();
    const workspaceIds = [...new Set(entries.map((e) => e.workspaceId))];
    principals = workspaceIds.map((workspaceId) => ({
      workspaceId, rootKeyId: "rk_reader", permissions: new Set(["audit.*.read_log"]), actor: { type: "root_key", id: "rk_reader" },
    }));
  }, 120_000);

  afterAll(() => {
    storage?.close();
    if (set) rmSync(set.dataDir, { recursive: true, force: true });
  });

  /** Every page of `input` at `limit`, from both, walked to the end through the cursor. */
  async function walk(principal: Principal, input: ListLogsInput) {
    const pages: unknown[] = [];
    let cursor = input.cursor;
    for (let i = 0; i <= entries.length + 1; i++) {
      const page = { ...input, cursor };
      const fromSqlite = await outcome(() => sqliteAudit.listLogs(principal, page));
      const fromPg = await outcome(() => pgAudit.listLogs(principal, page));
      expect({ page, answer: fromPg }).toStrictEqual({ page, answer: fromSqlite });
      pages.push(fromSqlite);
      if (!("value" in fromSqlite) || fromSqlite.value.cursor === undefined) return pages;
      cursor = fromSqlite.value.cursor;
    }
    throw new Error("the cursor did not reach the end");
  }

  function inputGrid(principal: Principal): ListLogsInput[] {
    const own = entries.filter((e) => e.workspaceId === principal.workspaceId);
    const other = entries.find((e) => e.workspaceId !== principal.workspaceId);
    const times = [...new Set(own.map((e) => e.time))];
    const events = [...new Set(own.map((e) => e.event))];
    const actorIds = [...new Set(own.map((e) => e.actorId))];
    const resourceIds = [...new Set(own.flatMap((e) => (JSON.parse(e.resources) as { id: string }[]).map((r) => r.id)))].slice(0, 12);
    const single: ListLogsInput[] = [
      {},
      ...events.map((event) => ({ event })),
      ...actorIds.map((actorId) => ({ actorId })),
      ...resourceIds.map((resourceId) => ({ resourceId })),
      ...times.flatMap((t) => [{ since: t }, { since: t + 1 }, { until: t }, { until: t - 1 }, { since: t, until: t }]),
      { event: "no.such.event" }, { actorId: "rk_nobody" }, { resourceId: "key_nobody" },
      { cursor: "log_nobody" }, ...(other ? [{ cursor: other.id }] : []), { cursor: own[0]!.id }, { cursor: own.at(-1)!.id },
    ];
    const combined: ListLogsInput[] = [
      ...events.flatMap((event) => actorIds.map((actorId) => ({ event, actorId }))),
      ...resourceIds.map((resourceId, i) => ({ resourceId, since: times[i % times.length], event: events[i % events.length] })),
      ...times.map((t, i) => ({ since: t, until: times[(i + 1) % times.length], actorId: actorIds[i % actorIds.length] })),
    ];
    return [...single, ...combined];
  }

  async function compareEverything(): Promise<number> {
    let compared = 0;
    for (const principal of principals) {
      for (const input of inputGrid(principal)) {
        for (const limit of [1, 2, 3, 7, undefined]) {
          await walk(principal, { ...input, ...(limit === undefined ? {} : { limit }) });
          compared++;
        }
      }
      for (const logId of [...entries.map((e) => e.id), "log_nobody"]) {
        const fromSqlite = await outcome(() => sqliteAudit.getLog(principal, { logId }));
        expect({ logId, answer: await outcome(() => pgAudit.getLog(principal, { logId })) }).toStrictEqual({ logId, answer: fromSqlite });
      }
    }
    return compared;
  }

  test("the PostgreSQL database sorts by locale, and the data set's ties on time order differently by bytes and by locale", async () => {
    const [row] = await localeSql.unsafe(`SELECT 'alpha' < 'Beta' AS locale, 'alpha' < 'Beta' COLLATE "C" AS bytes`);
    expect(row).toEqual({ locale: true, bytes: false });
    const tied = entries.filter((e) => e.time === entries.at(-1)!.time).map((e) => e.id);
    expect(tied.length).toBeGreaterThan(10);
    expect([...tied].sort((a, b) => a.localeCompare(b, "en-US"))).not.toEqual(tied);
    expect(principals.length).toBeGreaterThan(1);
  });

  test("every read gives SQLite's answer while every entry is within retention", async () => {
    clock.set(entries.at(-1)!.time);
    expect(await compareEverything()).toBeGreaterThan(100);
  }, 120_000);

  test("every read gives SQLite's answer when the oldest entries have expired by the clock, the cutoff on a batch's time", async () => {
    clock.set(entries.at(-1)!.time - DAY_MS + RETENTION_DAYS * DAY_MS);
    // The workspace of the last batches: which workspace's entry comes first is up to random log ids on a tie.
    const principal = principals.find((p) => p.workspaceId === entries.at(-1)!.workspaceId)!;
    const live = (await sqliteAudit.listLogs(principal, {})).items.length;
    expect(live).toBeGreaterThan(0);
    expect(live).toBeLessThan(entries.filter((e) => e.workspaceId === principal.workspaceId).length);
    await compareEverything();
  }, 120_000);

  test("a reader without audit.*.read_log is refused by both", async () => {
    const reader = { ...principals[0]!, permissions: new Set<string>() };
    const refused = { error: "insufficient_permissions" };
    expect(await outcome(() => sqliteAudit.listLogs(reader, {}))).toEqual(refused);
    expect(await outcome(() => pgAudit.listLogs(reader, {}))).toEqual(refused);
    expect(await outcome(() => pgAudit.getLog(reader, { logId: entries[0]!.id }))).toEqual(refused);
  });

  test("a prune past retention deletes the same rows from both, keeping the entries at the cutoff", async () => {
    const ids = async () => ({
      sqlite: storage!.sqlite.query<{ id: string }, []>("SELECT id FROM audit_logs ORDER BY id").all().map((r) => r.id),
      pg: (await localeSql.unsafe<{ id: string }[]>(`SELECT id FROM audit_logs ORDER BY id COLLATE "C"`)).map((r) => r.id),
    });
    const before = await ids();
    expect(before.pg).toEqual(before.sqlite);
    const nowMs = entries.at(-1)!.time - DAY_MS + RETENTION_DAYS * DAY_MS;
    const deleted = await sqliteAudit.prune(nowMs);
    expect(deleted).toBeGreaterThan(0);
    expect(deleted).toBeLessThan(entries.length);
    expect(await pgAudit.prune(nowMs)).toBe(deleted);
    const after = await ids();
    expect(after.pg).toEqual(after.sqlite);
    expect(after.sqlite.length).toBe(before.sqlite.length - deleted);
  });
});
