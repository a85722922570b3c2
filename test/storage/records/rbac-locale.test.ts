/**
 * Names on a PostgreSQL database whose collation is an ICU locale, where lower() alone would fold É
 * into é and sorting would not be by bytes: the unique indexes of names (migration 0002) and the
 * RBAC store still fold ASCII letters only and list in byte order, as SQLite does.
 * rbac.test.ts runs on a database sorting by bytes, where these differences do not show.
 */
import { describe, expect, test } from "bun:test";
import { clusterRecords } from "../../../src/storage/pg/records/index.ts";
import { openPg, type PgDb } from "../../../src/storage/pg/db.ts";
import { DuplicateRecord, type RecordBackend } from "../../../src/storage/records/index.ts";
import { step } from "../../../src/storage/work.ts";
import * as pgSchema from "../../../src/storage/pg/schema/index.ts";
import { postgresForFile } from "../../cluster/pg-database.ts";
import { missing, skipWithout } from "../../support/tools.ts";

describe.skipIf(skipWithout(missing.postgres(), "PostgreSQL"))("an ICU-collated PostgreSQL database (en-US)", () => {
  const closers: Array<() => Promise<void>> = [];
  const pg = postgresForFile(async () => {
    for (const close of closers.splice(0)) await close();
  });
  const open = async (): Promise<{ db: PgDb; records: RecordBackend }> => {
    const { db, close } = openPg(await pg.localeDatabase("en-US"), 2);
    closers.push(close);
    return { db, records: clusterRecords(db) };
  };

  /** What `write` rejects with, or undefined. */
  const refusal = (write: Promise<unknown>) => write.then(() => undefined, (error: unknown) => error);

  test("É and é make two workspace, role and permission names and slugs; A and a one", async () => {
    const { db, records } = await open();
    const workspace = (id: string, name: string) => refusal(db.insert(pgSchema.workspaces).values({ id, name, createdAt: 1 }));
    expect(await workspace("ws_1", "Éclair")).toBeUndefined();
    expect(await workspace("ws_2", "éclair")).toBeUndefined();
    expect(await workspace("ws_3", "ÉCLAIR")).toBeDefined();

    const insert = (id: string, name: string, slug: string) => refusal(Promise.resolve(records.write("ws_1", function* (r) {
      yield r.rbac.insertRole({ id: `role_${id}`, workspaceId: "ws_1", name, description: null, createdAt: 1 });
      yield r.rbac.insertPermission({ id: `perm_${id}`, workspaceId: "ws_1", name, slug, description: null, createdAt: 1 });
    })));
    expect(await insert("1", "Éclair", "Éclair.eat")).toBeUndefined();
    expect(await insert("2", "éclair", "éclair.eat")).toBeUndefined();
    expect(await insert("3", "ÉCLAIR", "other")).toBeInstanceOf(DuplicateRecord);
    expect(await insert("4", "other", "ÉCLAIR.EAT")).toBeInstanceOf(DuplicateRecord);
  });

  test("the store finds names folding ASCII letters only and lists ids in byte order", async () => {
    const { db, records } = await open();
    await db.insert(pgSchema.workspaces).values({ id: "ws_1", name: "one", createdAt: 1 });
    const ids = ["role_b", "role_B", "role_a", "role_é"];
    await records.write("ws_1", function* (r) {
      for (const [i, id] of ids.entries()) {
        yield r.rbac.insertRole({ id, workspaceId: "ws_1", name: ["Éclair", "shop", "Shop.admin", "tea"][i]!, description: null, createdAt: 1 });
        yield r.rbac.insertPermission({ id: id.replace("role", "perm"), workspaceId: "ws_1", name: `p${i}`, slug: `Éclair.${i}`, description: null, createdAt: 1 });
      }
    });
    const roles = async (query: { cursor?: string; search?: string }) =>
      (await records.read((r) => step(r.rbac.listRoles({ workspaceId: "ws_1", limit: 10, ...query })))).map((row) => row.id);
    expect(await roles({})).toEqual(["role_B", "role_a", "role_b", "role_é"]);
    expect(await roles({ cursor: "role_C" })).toEqual(["role_a", "role_b", "role_é"]);
    expect(await roles({ search: "éclair" })).toEqual([]);
    expect(await roles({ search: "SHOP" })).toEqual(["role_B", "role_a"]);
    expect((await records.read((r) => step(r.rbac.findRole("ws_1", "ÉCLAIR"))))?.id).toBe("role_b");
    expect(await records.read((r) => step(r.rbac.findRole("ws_1", "éclair")))).toBeUndefined();
    expect(await records.read((r) => step(r.rbac.rolesNamed("ws_1", ["Éclair"])))).toEqual([{ id: "role_b", name: "Éclair" }]);
    expect(await records.read((r) => step(r.rbac.rolesNamed("ws_1", ["éclair"])))).toEqual([]);
    expect(await records.read((r) => step(r.rbac.permissionIdBySlug("ws_1", "éclair.0")))).toBeUndefined();
    expect((await records.read((r) => step(r.rbac.findPermission("ws_1", "ÉCLAIR.0"))))?.id).toBe("perm_b");
    expect(await records.read((r) => step(r.rbac.findPermission("ws_1", "éclair.0")))).toBeUndefined();
    const permissions = await records.read((r) => step(r.rbac.listPermissions({ workspaceId: "ws_1", limit: 10, search: "ÉCLAIR." })));
    expect(permissions.map((p) => p.id)).toEqual(["perm_B", "perm_a", "perm_b", "perm_é"]);
  });
});
