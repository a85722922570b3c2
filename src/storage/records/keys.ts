/**
 * The records of end-user keys (embedded: drizzle over SQLite): key rows, their links to permissions
 * and roles as the key routes read and write them, the key spaces' settings keys are made with,
 * refills, and the workspaces' data keys of recoverable keys. Finds read live keys (not deleted).
 * Text compares and sorts by bytes, and lower() folds ASCII letters only (PostgreSQL's twin matches).
 */
import { and, asc, eq, getTableColumns, gte, inArray, isNotNull, isNull, lte, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { dataKeys, identities, keyPermissions, keyRoles, keySpaces, keys, permissions, ratelimitConfigs, rolePermissions, roles } from "../schema/index.ts";
import { rethrowDuplicate } from "./errors.ts";
import type { IdRange, SizedRow } from "./sized-rows.ts";

export interface KeyRecord {
  id: string;
  workspaceId: string;
  keySpaceId: string;
  hash: string;
  start: string;
  name: string | null;
  identityId: string | null;
  meta: Record<string, unknown> | null;
  expiresAt: number | null;
  enabled: boolean;
  /** Null means unlimited. */
  remaining: number | null;
  refillAmount: number | null;
  /** Null with a refill amount: daily; 1..31: monthly. */
  refillDay: number | null;
  lastRefillAt: number | null;
  recoverable: boolean;
  /** Ciphertext of the key string (recoverable keys). */
  encrypted: string | null;
  createdAt: number;
  updatedAt: number | null;
  lastUsedAt: number | null;
  deletedAt: number | null;
}

export type NewKeyRecord = Omit<KeyRecord, "updatedAt" | "lastUsedAt" | "deletedAt">;

/** The columns a management change sets; a field left out is unchanged. */
export type KeyPatch = Partial<Pick<KeyRecord,
  "name" | "identityId" | "meta" | "expiresAt" | "enabled" | "remaining" | "refillAmount" | "refillDay" | "lastRefillAt" | "updatedAt" | "deletedAt">>;

export type KeyCredits = Pick<KeyRecord, "remaining" | "refillAmount" | "refillDay">;

/** A change of a key's credits: columns set, or `remaining` moved within [0, max]. */
export type CreditChange =
  | { set: Partial<Pick<KeyRecord, "remaining" | "refillAmount" | "refillDay">> }
  | { increment: number; max: number }
  | { decrement: number };

/** A listed key: its meta as the stored JSON text, which a page answers as it is (lib/raw-json.ts). */
export type KeyListRow = Omit<KeyRecord, "meta"> & { metaText: string | null };

export interface KeyListQuery extends IdRange {
  keySpaceId: string;
  /** Only the keys of this identity. */
  identityId?: string;
  limit: number;
}

export interface KeySpaceRecord {
  id: string;
  defaultPrefix: string | null;
  defaultBytes: number | null;
  storeEncryptedKeys: boolean;
}

export interface RefillCandidate {
  id: string;
  workspaceId: string;
  refillDay: number | null;
  lastRefillAt: number | null;
}

export interface LinkedPermission {
  id: string;
  name: string;
  slug: string;
  description: string | null;
}

export interface LinkedRole {
  id: string;
  name: string;
  description: string | null;
}

export interface KeyStore {
  /** The live key with this id in the workspace. */
  findInWorkspace(workspaceId: string, keyId: string): Maybe<KeyRecord | undefined>;
  /** The live key with this hash in the workspace. */
  findByHash(workspaceId: string, hash: string): Maybe<KeyRecord | undefined>;
  /** Live keys of a key space by id in byte order. */
  list(query: KeyListQuery): Maybe<KeyListRow[]>;
  /** The ids `list` answers, each with the bytes of its meta and its live identity's (read without either). */
  listSizes(query: KeyListQuery): Maybe<SizedRow[]>;
  /** Inserts a key; a hash already stored throws DuplicateRecord. */
  insert(row: NewKeyRecord): Maybe<void>;
  update(keyId: string, patch: KeyPatch): Maybe<void>;
  /** Applies a credit change; answers the credits after it (undefined: no such key). */
  changeCredits(keyId: string, change: CreditChange): Maybe<KeyCredits | undefined>;
  /** Removes the key row with its permission and role links and its named limits. */
  deletePermanently(keyId: string): Maybe<void>;
  /** Soft-deletes every live key of a key space (its API was deleted), as keys.deleteKey soft-deletes one. */
  markDeletedInKeySpace(keySpaceId: string, nowMs: number): Maybe<void>;
  findKeySpace(keySpaceId: string): Maybe<KeySpaceRecord | undefined>;
  /** A key's direct permissions, by slug (byte order). */
  permissionsOf(keyId: string): Maybe<LinkedPermission[]>;
  /** A key's roles, by name (byte order). */
  rolesOf(keyId: string): Maybe<LinkedRole[]>;
  /** The permissions of these roles, by slug (byte order). */
  permissionsOfRoles(roleIds: readonly string[]): Maybe<Array<LinkedPermission & { roleId: string }>>;
  /** The permission of the workspace whose id is `ref`, else whose slug equals it ignoring ASCII case. */
  permissionIdByRef(workspaceId: string, ref: string): Maybe<string | undefined>;
  permissionIdsOf(keyId: string): Maybe<string[]>;
  roleIdsOf(keyId: string): Maybe<string[]>;
  /** Links permissions to a key; links it already has are kept. */
  addPermissions(workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): Maybe<void>;
  removePermissions(keyId: string, permissionIds: readonly string[]): Maybe<void>;
  /** Links roles to a key; links it already has are kept. */
  addRoles(workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): Maybe<void>;
  removeRoles(keyId: string, roleIds: readonly string[]): Maybe<void>;
  /** Live keys with a refill, every workspace's. */
  refillCandidates(): Maybe<RefillCandidate[]>;
  /** Raises `remaining` to the refill amount (never lowers it) and sets `lastRefillAt`. */
  refill(keyId: string, nowMs: number): Maybe<void>;
  /** The workspace's sealed data key. */
  findDataKey(workspaceId: string): Maybe<string | undefined>;
  /** Stores a workspace's sealed data key; one already stored is kept. */
  insertDataKey(row: { workspaceId: string; encrypted: string; createdAt: number }): Maybe<void>;
}

const PERMISSION = { id: permissions.id, name: permissions.name, slug: permissions.slug, description: permissions.description };
const CREDITS = { remaining: keys.remaining, refillAmount: keys.refillAmount, refillDay: keys.refillDay };

/** `remaining` after a credit change, as SQL. */
function remainingAfter(change: Exclude<CreditChange, { set: unknown }>): SQL {
  return "increment" in change
    ? sql`min(${keys.remaining} + ${change.increment}, ${change.max})`
    : sql`max(${keys.remaining} - ${change.decrement}, 0)`;
}

function keyListConditions(query: KeyListQuery): SQL | undefined {
  const conditions: SQL[] = [eq(keys.keySpaceId, query.keySpaceId), isNull(keys.deletedAt)];
  if (query.cursor !== undefined) conditions.push(gte(keys.id, query.cursor));
  if (query.until !== undefined) conditions.push(lte(keys.id, query.until));
  if (query.identityId !== undefined) conditions.push(eq(keys.identityId, query.identityId));
  return and(...conditions);
}

export class SqliteKeyStore implements KeyStore {
  constructor(private readonly db: Db) {}

  findInWorkspace(workspaceId: string, keyId: string): KeyRecord | undefined {
    return this.db.select().from(keys).where(and(eq(keys.id, keyId), eq(keys.workspaceId, workspaceId), isNull(keys.deletedAt))).get();
  }

  findByHash(workspaceId: string, hash: string): KeyRecord | undefined {
    return this.db.select().from(keys).where(and(eq(keys.hash, hash), eq(keys.workspaceId, workspaceId), isNull(keys.deletedAt))).get();
  }

  list(query: KeyListQuery): KeyListRow[] {
    const { meta, ...columns } = getTableColumns(keys);
    return this.db.select({ ...columns, metaText: sql<string | null>`${meta}` }).from(keys).where(keyListConditions(query)).orderBy(asc(keys.id)).limit(query.limit).all();
  }

  listSizes(query: KeyListQuery): SizedRow[] {
    return this.db.select({ id: keys.id, bytes: sql<number>`coalesce(octet_length(${keys.meta}), 0) + coalesce(octet_length(${identities.meta}), 0)` })
      .from(keys).leftJoin(identities, and(eq(identities.id, keys.identityId), isNull(identities.deletedAt)))
      .where(keyListConditions(query)).orderBy(asc(keys.id)).limit(query.limit).all();
  }

  insert(row: NewKeyRecord): void {
    rethrowDuplicate(() => this.db.insert(keys).values(row).run());
  }

  update(keyId: string, patch: KeyPatch): void {
    this.db.update(keys).set(patch).where(eq(keys.id, keyId)).run();
  }

  changeCredits(keyId: string, change: CreditChange): KeyCredits | undefined {
    const columns = "set" in change ? change.set : { remaining: remainingAfter(change) };
    return this.db.update(keys).set(columns).where(eq(keys.id, keyId)).returning(CREDITS).get();
  }

  deletePermanently(keyId: string): void {
    this.db.delete(keyPermissions).where(eq(keyPermissions.keyId, keyId)).run();
    this.db.delete(keyRoles).where(eq(keyRoles.keyId, keyId)).run();
    this.db.delete(ratelimitConfigs).where(eq(ratelimitConfigs.keyId, keyId)).run();
    this.db.delete(keys).where(eq(keys.id, keyId)).run();
  }

  markDeletedInKeySpace(keySpaceId: string, nowMs: number): void {
    this.db.update(keys).set({ deletedAt: nowMs, updatedAt: nowMs }).where(and(eq(keys.keySpaceId, keySpaceId), isNull(keys.deletedAt))).run();
  }

  findKeySpace(keySpaceId: string): KeySpaceRecord | undefined {
    return this.db.select({ id: keySpaces.id, defaultPrefix: keySpaces.defaultPrefix, defaultBytes: keySpaces.defaultBytes, storeEncryptedKeys: keySpaces.storeEncryptedKeys })
      .from(keySpaces).where(eq(keySpaces.id, keySpaceId)).get();
  }

  permissionsOf(keyId: string): LinkedPermission[] {
    return this.db.select(PERMISSION).from(keyPermissions).innerJoin(permissions, eq(permissions.id, keyPermissions.permissionId))
      .where(eq(keyPermissions.keyId, keyId)).orderBy(asc(permissions.slug)).all();
  }

  rolesOf(keyId: string): LinkedRole[] {
    return this.db.select({ id: roles.id, name: roles.name, description: roles.description }).from(keyRoles)
      .innerJoin(roles, eq(roles.id, keyRoles.roleId)).where(eq(keyRoles.keyId, keyId)).orderBy(asc(roles.name)).all();
  }

  permissionsOfRoles(roleIds: readonly string[]): Array<LinkedPermission & { roleId: string }> {
    if (roleIds.length === 0) return [];
    return this.db.select({ roleId: rolePermissions.roleId, ...PERMISSION }).from(rolePermissions)
      .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
      .where(inArray(rolePermissions.roleId, [...roleIds])).orderBy(asc(permissions.slug)).all();
  }

  permissionIdByRef(workspaceId: string, ref: string): string | undefined {
    return this.db.select({ id: permissions.id }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`(${permissions.id} = ${ref} or lower(${permissions.slug}) = lower(${ref}))`))
      .orderBy(sql`${permissions.id} = ${ref} desc`).limit(1).get()?.id;
  }

  permissionIdsOf(keyId: string): string[] {
    return this.db.select({ id: keyPermissions.permissionId }).from(keyPermissions).where(eq(keyPermissions.keyId, keyId)).all().map((p) => p.id);
  }

  roleIdsOf(keyId: string): string[] {
    return this.db.select({ id: keyRoles.roleId }).from(keyRoles).where(eq(keyRoles.keyId, keyId)).all().map((r) => r.id);
  }

  addPermissions(workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): void {
    if (permissionIds.length === 0) return;
    this.db.insert(keyPermissions).values(permissionIds.map((permissionId) => ({ keyId, permissionId, workspaceId, createdAt: nowMs }))).onConflictDoNothing().run();
  }

  removePermissions(keyId: string, permissionIds: readonly string[]): void {
    if (permissionIds.length === 0) return;
    this.db.delete(keyPermissions).where(and(eq(keyPermissions.keyId, keyId), inArray(keyPermissions.permissionId, [...permissionIds]))).run();
  }

  addRoles(workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): void {
    if (roleIds.length === 0) return;
    this.db.insert(keyRoles).values(roleIds.map((roleId) => ({ keyId, roleId, workspaceId, createdAt: nowMs }))).onConflictDoNothing().run();
  }

  removeRoles(keyId: string, roleIds: readonly string[]): void {
    if (roleIds.length === 0) return;
    this.db.delete(keyRoles).where(and(eq(keyRoles.keyId, keyId), inArray(keyRoles.roleId, [...roleIds]))).run();
  }

  refillCandidates(): RefillCandidate[] {
    return this.db.select({ id: keys.id, workspaceId: keys.workspaceId, refillDay: keys.refillDay, lastRefillAt: keys.lastRefillAt })
      .from(keys).where(and(isNotNull(keys.refillAmount), isNull(keys.deletedAt))).all();
  }

  refill(keyId: string, nowMs: number): void {
    this.db.update(keys).set({
      remaining: sql`CASE WHEN ${keys.remaining} IS NULL OR ${keys.remaining} < ${keys.refillAmount} THEN ${keys.refillAmount} ELSE ${keys.remaining} END`,
      lastRefillAt: nowMs,
    }).where(eq(keys.id, keyId)).run();
  }

  findDataKey(workspaceId: string): string | undefined {
    return this.db.select({ encrypted: dataKeys.encrypted }).from(dataKeys).where(eq(dataKeys.workspaceId, workspaceId)).get()?.encrypted;
  }

  insertDataKey(row: { workspaceId: string; encrypted: string; createdAt: number }): void {
    this.db.insert(dataKeys).values(row).onConflictDoNothing().run();
  }
}
