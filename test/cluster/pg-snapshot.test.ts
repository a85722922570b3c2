/**
 * The cold load of a key snapshot from PostgreSQL (src/services/verification/pg-snapshot.ts) gives
 * exactly the snapshot the SQLite loader gives, for every key of a data dir filled through the real
 * API and copied into PostgreSQL: values, list orders, RawJson texts, the permission index and the
 * size estimate. The data set gets, through the API, what snapshots need beyond it: large metas
 * (kept as RawJson), non-ASCII and control characters, roles, permissions and limit names that
 * sort differently by bytes and by locale, a deleted key and a deleted identity. The PostgreSQL
 * database sorts by an ICU locale, so that only an explicit byte order gives SQLite's lists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { SQL } from "bun";
import { RawJson } from "../../src/lib/raw-json.ts";
import { ALL_GRANTS } from "../../src/services/auth/permissions.ts";
import { PgSnapshotLoader } from "../../src/services/verification/pg-snapshot.ts";
import { SnapshotLoader, type KeySnapshot } from "../../src/services/verification/snapshot.ts";
import { SLICED_LOAD_MIN_ROWS } from "../../src/services/verification/many-permissions.ts";
import { DATABASE_FILE } from "../../src/storage/data-dir.ts";
import { openStorage, type Storage } from "../../src/storage/db.ts";
import { copyDataDirToPostgres } from "../../src/storage/pg/copy-from-sqlite.ts";
import { startHarness } from "../support/harness.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { buildEmbeddedDataSet, type EmbeddedDataSet } from "./embedded-data-set.ts";
import { postgresForFile } from "./pg-database.ts";

const SHARED_VALUE_BYTES = 1 << 20;
/** Orders differently by bytes (SQLite, COLLATE "C") and by an English locale. */
const LOCALE_SORTED_NAMES = ["alpha", "Beta", "_under", "a-b", "a.b", "Zeta", "b:1"];
const NON_ASCII = "Émile · éclair · 東京 · 🚀 · \"q\" \\ \n\t\u0001";
const LARGE_META = { blob: "x".repeat(2000), text: NON_ASCII, list: Array.from({ length: 50 }, (_, i) => ({ i, on: i % 2 === 0 })) };

/**
 * Keys, roles, permissions and identities the snapshots need beyond the shared data set, added through
 * the API on its data dir. The boot folds the data set's unfolded credit spend into its balance, which
 * both loaders then read alike.
 */
async function addSnapshotCases(set: EmbeddedDataSet): Promise<void> {
  const h = await startHarness({ env: { TOLLGATE_DATA_DIR: set.dataDir, TOLLGATE_MASTER_KEY: set.masterKey.toString("base64") } });
  const rootKey = await h.rootKeyWith([...ALL_GRANTS]);
  const call = async (path: string, body: unknown) => {
    const res = await h.post(path, body, { key: rootKey });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const { apiId } = await call("/v2/apis.createApi", { name: "snapshots" });
  for (const name of LOCALE_SORTED_NAMES) await call("/v2/permissions.createPermission", { name: `perm ${name}`, slug: `p${name}` });
  for (const [i, name] of LOCALE_SORTED_NAMES.entries()) {
    await call("/v2/permissions.createRole", { name, permissions: [`p${name}`, `p${LOCALE_SORTED_NAMES[(i + 1) % LOCALE_SORTED_NAMES.length]}`] });
  }
  const localeLimits = ["alpha", "Beta", "Émile", "éclair", "zeta", "東京"].map((name, i) => ({ name: `${name} ${NON_ASCII}`, limit: i + 1, duration: 1000 * (i + 1), autoApply: i % 2 === 0 }));
  await call("/v2/identities.createIdentity", { externalId: "user_large", meta: LARGE_META, ratelimits: localeLimits });
  await call("/v2/identities.createIdentity", { externalId: "user_gone", meta: { text: NON_ASCII } });

  const createKey = async (body: Record<string, unknown>) => {
    const data = await call("/v2/keys.createKey", { apiId, ...body });
    set.plaintexts.set(data.keyId, data.key);
    return data.keyId as string;
  };
  await createKey({ name: "large meta", meta: LARGE_META, externalId: "user_large", roles: LOCALE_SORTED_NAMES.slice(0, 4), ratelimits: localeLimits });
  await createKey({ name: NON_ASCII, meta: { text: NON_ASCII, [NON_ASCII]: [NON_ASCII] }, permissions: LOCALE_SORTED_NAMES.map((n) => `p${n}`), roles: LOCALE_SORTED_NAMES.slice(3) });
  await createKey({ name: "identity gone", externalId: "user_gone", credits: { remaining: 0 } });
  // More permission rows than one statement gathers in SQLite (loaded in slices there), some held through two roles, in an order bytes and locale disagree on.
  const heavyRoles = ["heavy-a", "heavy-b", "heavy-c"];
  for (const [r, name] of heavyRoles.entries()) {
    await call("/v2/permissions.createRole", { name, permissions: Array.from({ length: 1000 }, (_, p) => `${(p + r) % 2 === 0 ? "B" : "a"}${(p + r * 500) % 1500}.read-write-heavy`) });
  }
  await createKey({ name: "heavy", roles: heavyRoles, permissions: ["a1.*", "palpha"] });
  const deleted = await createKey({ name: "deleted", roles: ["alpha"] });
  await call("/v2/keys.deleteKey", { keyId: deleted });
  await call("/v2/identities.deleteIdentity", { identity: "user_gone" });
  await h.running.stop();
  rmSync(h.dataDir, { recursive: true, force: true });
}

/** The snapshot with every RawJson as its text, so that a deep comparison compares the texts. */
function comparable(snap: KeySnapshot | undefined): unknown {
  if (snap === undefined) return undefined;
  const meta = (m: unknown) => (m instanceof RawJson ? { rawJson: m.text } : m);
  return { ...snap, meta: meta(snap.meta), identity: snap.identity && { ...snap.identity, meta: meta(snap.identity.meta) } };
}

describe.skipIf(skipWithout(missing.postgres(), "loading key snapshots from PostgreSQL"))("loading a key snapshot from PostgreSQL", () => {
  const pg = postgresForFile();
  let set: EmbeddedDataSet | undefined;
  let storage: Storage | undefined;
  let sqliteLoader: SnapshotLoader;
  let pgLoader: PgSnapshotLoader;
  let hashes: string[];
  let localeSql: SQL;

  beforeAll(async () => {
    set = await buildEmbeddedDataSet();
    await addSnapshotCases(set);
    const url = await pg.localeDatabase("en-US");
    localeSql = pg.client(url, 2);
    await copyDataDirToPostgres(set.dataDir, url);
    pgLoader = new PgSnapshotLoader(localeSql, SHARED_VALUE_BYTES);
    storage = openStorage(join(set.dataDir, DATABASE_FILE), { readonly: true });
    sqliteLoader = new SnapshotLoader(storage.sqlite, { pendingOf: () => 0 }, SHARED_VALUE_BYTES);
    hashes = storage.sqlite.query<{ hash: string }, []>("SELECT hash FROM keys ORDER BY id").all().map((r) => r.hash);
  }, 60_000);

  afterAll(() => {
    storage?.close();
    if (set) rmSync(set.dataDir, { recursive: true, force: true });
  });

  test("the PostgreSQL database sorts by locale, not by bytes", async () => {
    const [row] = await localeSql.unsafe(`SELECT 'alpha' < 'Beta' AS locale, 'alpha' < 'Beta' COLLATE "C" AS bytes`);
    expect(row).toEqual({ locale: true, bytes: false });
  });

  test("every key's snapshot from PostgreSQL equals SQLite's, RawJson texts, permission index and size estimate included", async () => {
    expect(hashes.length).toBe(set!.plaintexts.size);
    for (const hash of hashes) {
      const fromSqlite = await sqliteLoader.load(hash);
      expect(fromSqlite).toBeDefined();
      expect({ hash, snapshot: comparable(await pgLoader.load(hash)) }).toStrictEqual({ hash, snapshot: comparable(fromSqlite) });
    }
  });

  test("the data set covers RawJson metas, locale-ordered lists, identities with limits, a deleted key and identity, a key loaded in slices", async () => {
    const snaps = await Promise.all(hashes.map(async (hash) => (await sqliteLoader.load(hash))!));
    // Long enough for PostgreSQL's list to be indexed in slices too (pg-snapshot.ts).
    expect(snaps.some((s) => s.answer.permissions instanceof RawJson && s.permissions.length >= SLICED_LOAD_MIN_ROWS && JSON.stringify(s.permissions).length >= 32_768)).toBe(true);
    expect(snaps.some((s) => s.meta instanceof RawJson)).toBe(true);
    expect(snaps.some((s) => s.identity?.meta instanceof RawJson && s.identity.ratelimits.length > 1)).toBe(true);
    const byLocale = (list: readonly string[]) => [...list].sort((a, b) => a.localeCompare(b, "en-US"));
    expect(snaps.some((s) => s.roles.length > 2 && byLocale(s.roles).join() !== s.roles.join())).toBe(true);
    expect(snaps.some((s) => s.permissions.length > 2 && byLocale(s.permissions).join() !== s.permissions.join())).toBe(true);
    expect(snaps.some((s) => s.ratelimits.length > 2 && byLocale(s.ratelimits.map((l) => l.name)).join() !== s.ratelimits.map((l) => l.name).join())).toBe(true);
    expect(snaps.some((s) => s.deleted)).toBe(true);
    expect(snaps.some((s) => s.identity === null && s.remaining === 0)).toBe(true);
  });

  test("an unknown hash loads as undefined from both", async () => {
    expect(sqliteLoader.load("no-such-hash")).toBeUndefined();
    expect(await pgLoader.load("no-such-hash")).toBeUndefined();
  });
});
