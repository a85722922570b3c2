/**
 * The records of end-user keys on PostgreSQL (cluster mode), as records/keys.ts answers: ids, slugs
 * and names compared and sorted under COLLATE "C" (bytes), lower() folding ASCII letters only.
 */
import { and, asc, eq, getTableColumns, gte, inArray, isNotNull, isNull, lte, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { byBytes, rethrowPgDuplicate, type PgDb } from "../db.ts";
import { dataKeys, identities, keyPermissions, keyRoles, keySpaces, keys, permissions, ratelimitConfigs, rolePermissions, roles } from "../schema/index.ts";
import type {
  CreditChange, KeyCredits, KeyListQuery, KeyListRow, KeyPatch, KeyRecord, KeySpaceRecord, KeyStore, LinkedPermission, LinkedRole, NewKeyRecord, RefillCandidate,
} from "../../records/keys.ts";
import type { SizedRow } from "../../records/sized-rows.ts";

const PERMISSION = { id: permissions.id, name: permissions.name, slug: permissions.slug, description: permissions.description };
const CREDITS = { remaining: keys.remaining, refillAmount: keys.refillAmount, refillDay: keys.refillDay };

/** lower() of text folding ASCII letters only, as SQLite's. */
const lowerAscii = (value: SQLWrapper | string) => sql`lower(${value} COLLATE "C")`;

function remainingAfter(change: Exclude<CreditChange, { set: unknown }>): SQL {
  return "increment" in change
    ? sql`least(${keys.remaining} + ${change.increment}::int8, ${change.max}::int8)`
    : sql`greatest(${keys.remaining} - ${change.decrement}::int8, 0)`;
}

function keyListConditions(query: KeyListQuery): SQL | undefined {
  const conditions: SQL[] = [eq(keys.keySpaceId, query.keySpaceId), isNull(keys.deletedAt)];
  if (query.cursor !== undefined) conditions.push(gte(byBytes(keys.id), query.cursor));
  if (query.until !== undefined) conditions.push(lte(byBytes(keys.id), query.until));
  if (query.identityId !== undefined) conditions.push(eq(keys.identityId, query.identityId));
  return and(...conditions);
}

export class PgKeyStore implements KeyStore {
  constructor(private readonly db: PgDb) {}

  async findInWorkspace(workspaceId: string, keyId: string): Promise<KeyRecord | undefined> {
    const [row] = await this.db.select().from(keys).where(and(eq(keys.id, keyId), eq(keys.workspaceId, workspaceId), isNull(keys.deletedAt)));
    return row;
  }

  async findByHash(workspaceId: string, hash: string): Promise<KeyRecord | undefined> {
    const [row] = await this.db.select().from(keys).where(and(eq(keys.hash, hash), eq(keys.workspaceId, workspaceId), isNull(keys.deletedAt)));
    return row;
  }

  async list(query: KeyListQuery): Promise<KeyListRow[]> {
    const { meta, ...columns } = getTableColumns(keys);
    return this.db.select({ ...columns, metaText: sql<string | null>`${meta}` }).from(keys).where(keyListConditions(query)).orderBy(asc(byBytes(keys.id))).limit(query.limit);
  }

  async listSizes(query: KeyListQuery): Promise<SizedRow[]> {
    // octet_length of a text reads the stored value's header only, not a TOASTed meta's megabyte.
    const bytes = sql<number>`(coalesce(octet_length(${keys.meta}), 0) + coalesce(octet_length(${identities.meta}), 0))::int`;
    return this.db.select({ id: keys.id, bytes })
      .from(keys).leftJoin(identities, and(eq(identities.id, keys.identityId), isNull(identities.deletedAt)))
      .where(keyListConditions(query)).orderBy(asc(byBytes(keys.id))).limit(query.limit);
  }

  async insert(row: NewKeyRecord): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(keys).values(row);
    });
  }

  async update(keyId: string, patch: KeyPatch): Promise<void> {
    await this.db.update(keys).set(patch).where(eq(keys.id, keyId));
  }

  async changeCredits(keyId: string, change: CreditChange): Promise<KeyCredits | undefined> {
    const columns = "set" in change ? change.set : { remaining: remainingAfter(change) };
    const [row] = await this.db.update(keys).set(columns).where(eq(keys.id, keyId)).returning(CREDITS);
    return row;
  }

  async deletePermanently(keyId: string): Promise<void> {
    await this.db.delete(keyPermissions).where(eq(keyPermissions.keyId, keyId));
    await this.db.delete(keyRoles).where(eq(keyRoles.keyId, keyId));
    await this.db.delete(ratelimitConfigs).where(eq(ratelimitConfigs.keyId, keyId));
    await this.db.delete(keys).where(eq(keys.id, keyId));
  }

  async markDeletedInKeySpace(keySpaceId: string, nowMs: number): Promise<void> {
    await this.db.update(keys).set({ deletedAt: nowMs, updatedAt: nowMs }).where(and(eq(keys.keySpaceId, keySpaceId), isNull(keys.deletedAt)));
  }

  async findKeySpace(keySpaceId: string): Promise<KeySpaceRecord | undefined> {
    const [row] = await this.db.select({ id: keySpaces.id, defaultPrefix: keySpaces.defaultPrefix, defaultBytes: keySpaces.defaultBytes, storeEncryptedKeys: keySpaces.storeEncryptedKeys })
      .from(keySpaces).where(eq(keySpaces.id, keySpaceId));
    return row;
  }

  async permissionsOf(keyId: string): Promise<LinkedPermission[]> {
    return this.db.select(PERMISSION).from(keyPermissions).innerJoin(permissions, eq(permissions.id, keyPermissions.permissionId))
      .where(eq(keyPermissions.keyId, keyId)).orderBy(asc(byBytes(permissions.slug)));
  }

  async rolesOf(keyId: string): Promise<LinkedRole[]> {
    return this.db.select({ id: roles.id, name: roles.name, description: roles.description }).from(keyRoles)
      .innerJoin(roles, eq(roles.id, keyRoles.roleId)).where(eq(keyRoles.keyId, keyId)).orderBy(asc(byBytes(roles.name)));
  }

  async permissionsOfRoles(roleIds: readonly string[]): Promise<Array<LinkedPermission & { roleId: string }>> {
    if (roleIds.length === 0) return [];
    return this.db.select({ roleId: rolePermissions.roleId, ...PERMISSION }).from(rolePermissions)
      .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
      .where(inArray(rolePermissions.roleId, [...roleIds])).orderBy(asc(byBytes(permissions.slug)));
  }

  async permissionIdByRef(workspaceId: string, ref: string): Promise<string | undefined> {
    const [row] = await this.db.select({ id: permissions.id }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`(${permissions.id} = ${ref} or ${lowerAscii(permissions.slug)} = ${lowerAscii(ref)})`))
      .orderBy(sql`${permissions.id} = ${ref} desc`).limit(1);
    return row?.id;
  }

  async permissionIdsOf(keyId: string): Promise<string[]> {
    const rows = await this.db.select({ id: keyPermissions.permissionId }).from(keyPermissions).where(eq(keyPermissions.keyId, keyId));
    return rows.map((p) => p.id);
  }

  async roleIdsOf(keyId: string): Promise<string[]> {
    const rows = await this.db.select({ id: keyRoles.roleId }).from(keyRoles).where(eq(keyRoles.keyId, keyId));
    return rows.map((r) => r.id);
  }

  async addPermissions(workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): Promise<void> {
    if (permissionIds.length === 0) return;
    await this.db.insert(keyPermissions).values(permissionIds.map((permissionId) => ({ keyId, permissionId, workspaceId, createdAt: nowMs }))).onConflictDoNothing();
  }

  async removePermissions(keyId: string, permissionIds: readonly string[]): Promise<void> {
    if (permissionIds.length === 0) return;
    await this.db.delete(keyPermissions).where(and(eq(keyPermissions.keyId, keyId), inArray(keyPermissions.permissionId, [...permissionIds])));
  }

  async addRoles(workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db.insert(keyRoles).values(roleIds.map((roleId) => ({ keyId, roleId, workspaceId, createdAt: nowMs }))).onConflictDoNothing();
  }

  async removeRoles(keyId: string, roleIds: readonly string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db.delete(keyRoles).where(and(eq(keyRoles.keyId, keyId), inArray(keyRoles.roleId, [...roleIds])));
  }

  async refillCandidates(): Promise<RefillCandidate[]> {
    return this.db.select({ id: keys.id, workspaceId: keys.workspaceId, refillDay: keys.refillDay, lastRefillAt: keys.lastRefillAt })
      .from(keys).where(and(isNotNull(keys.refillAmount), isNull(keys.deletedAt)));
  }

  async refill(keyId: string, nowMs: number): Promise<void> {
    await this.db.update(keys).set({
      remaining: sql`CASE WHEN ${keys.remaining} IS NULL OR ${keys.remaining} < ${keys.refillAmount} THEN ${keys.refillAmount} ELSE ${keys.remaining} END`,
      lastRefillAt: nowMs,
    }).where(eq(keys.id, keyId));
  }

  async findDataKey(workspaceId: string): Promise<string | undefined> {
    const [row] = await this.db.select({ encrypted: dataKeys.encrypted }).from(dataKeys).where(eq(dataKeys.workspaceId, workspaceId));
    return row?.encrypted;
  }

  async insertDataKey(row: { workspaceId: string; encrypted: string; createdAt: number }): Promise<void> {
    await this.db.insert(dataKeys).values(row).onConflictDoNothing();
  }
}
