/**
 * The storage seam's two backends for one contract suite: `eachBackend` declares the suite once
 * against the embedded backend (a migrated SQLite file in a temporary directory) and once against
 * the cluster backend (a fresh migrated PostgreSQL database on a server started for the file), a new
 * database for every test. The PostgreSQL databases sort text by an ICU locale, as a server set up
 * for people's languages does, so that only an explicit byte order gives SQLite's answers.
 */
import { afterEach, describe } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import { embeddedRecords, type RecordBackend } from "../../../src/storage/records/index.ts";
import { clusterRecords } from "../../../src/storage/pg/records/index.ts";
import { openPg } from "../../../src/storage/pg/db.ts";
import * as sqliteSchema from "../../../src/storage/schema/index.ts";
import * as pgSchema from "../../../src/storage/pg/schema/index.ts";
import { postgresForFile } from "../../cluster/pg-database.ts";
import { missing, skipWithout } from "../../support/tools.ts";

export interface TestBackend {
  readonly records: RecordBackend;
  /** Inserts a workspace row, as the records of other domains need one. */
  workspace(id: string, name?: string): Promise<void>;
  /** Inserts a bare key row in an existing key space, as records that belong to a key need one. */
  key(row: { id: string; workspaceId: string; keySpaceId: string }): Promise<void>;
  /** Inserts a role, which no record store writes yet. */
  role(row: RoleRow): Promise<void>;
}

export interface RoleRow {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  createdAt: number;
}

export type BackendKind = "embedded" | "cluster";

/**
 * Declares `suite` for each backend; `open()` gives a fresh one inside a test. `icuLocale`: the
 * PostgreSQL databases sort text by that ICU locale instead of the server's default (bytes), so
 * that a query which forgets to compare by bytes answers differently from SQLite.
 */
export function eachBackend(suite: (open: () => Promise<TestBackend>, kind: BackendKind) => void): void {
  describe("embedded (SQLite)", () => {
    const closers: Array<() => void> = [];
    afterEach(() => {
      for (const close of closers.splice(0)) close();
    });
    suite(async () => {
      const dir = mkdtempSync(join(tmpdir(), "tollgate-records-"));
      const storage = openStorage(join(dir, "tollgate.db"));
      applyMigrations(storage.sqlite);
      closers.push(() => {
        storage.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return {
        records: embeddedRecords(storage),
        async workspace(id, name = id) {
          storage.db.insert(sqliteSchema.workspaces).values({ id, name, createdAt: 1 }).run();
        },
        async key(row) {
          storage.db.insert(sqliteSchema.keys).values({ ...row, hash: `hash_${row.id}`, start: "tg_", createdAt: 1 }).run();
        },
        async role(row) {
          storage.db.insert(sqliteSchema.roles).values(row).run();
        },
      };
    }, "embedded");
  });

  describe.skipIf(skipWithout(missing.postgres(), "PostgreSQL"))("cluster (PostgreSQL)", () => {
    const closers: Array<() => Promise<void>> = [];
    const pg = postgresForFile(async () => {
      for (const close of closers.splice(0)) await close();
    });
    suite(async () => {
      const { db, close } = openPg(await pg.localeDatabase("en-US"), 4);
      closers.push(close);
      return {
        records: clusterRecords(db),
        async workspace(id, name = id) {
          await db.insert(pgSchema.workspaces).values({ id, name, createdAt: 1 });
        },
        async key(row) {
          await db.insert(pgSchema.keys).values({ ...row, hash: `hash_${row.id}`, start: "tg_", createdAt: 1 });
        },
        async role(row) {
          await db.insert(pgSchema.roles).values(row);
        },
      };
    }, "cluster");
  });
}
