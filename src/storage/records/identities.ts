/**
 * The records of identities and of the named rate limits of keys and identities (embedded: drizzle
 * over SQLite). Finds read live (not deleted) identities only unless they say otherwise.
 */
import { and, asc, eq, gte, inArray, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { identities, ratelimitConfigs } from "../schema/index.ts";
import { likeContains } from "../../lib/like.ts";
import { rethrowDuplicate } from "./errors.ts";
import type { IdRange, SizedRow } from "./sized-rows.ts";

export interface IdentitySummary {
  id: string;
  externalId: string;
  meta: Record<string, unknown> | null;
}

/** A listed identity: its meta as the stored JSON text, which a page answers as it is (lib/raw-json.ts). */
export interface IdentityListRow {
  id: string;
  externalId: string;
  metaText: string | null;
}

export interface IdentityListQuery extends IdRange {
  workspaceId: string;
  limit: number;
  /** id or externalId contains it, ASCII case-insensitively; trimmed, non-empty. */
  search?: string;
}

export interface IdentityStore {
  findByExternalId(workspaceId: string, externalId: string): Maybe<IdentitySummary | undefined>;
  /** The live identity with this id, in any workspace. */
  findById(identityId: string): Maybe<IdentitySummary | undefined>;
  /** The live identity with this id in the workspace. */
  findInWorkspace(workspaceId: string, identityId: string): Maybe<IdentitySummary | undefined>;
  /** Inserts a live identity; a live one of the workspace with the same externalId throws DuplicateRecord. */
  insert(row: { id: string; workspaceId: string; externalId: string; meta: Record<string, unknown>; createdAt: number }): Maybe<void>;
  /** Sets `updatedAt`, and `meta` when given. */
  update(identityId: string, change: { meta?: Record<string, unknown>; updatedAt: number }): Maybe<void>;
  markDeleted(identityId: string, nowMs: number): Maybe<void>;
  /** Live identities by id in byte order. */
  list(query: IdentityListQuery): Maybe<IdentityListRow[]>;
  /** The ids `list` answers, each with the bytes of its stored meta (read without the meta). */
  listSizes(query: IdentityListQuery): Maybe<SizedRow[]>;
}

export interface RatelimitConfig {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

/** Whose named limits: a key's or an identity's. */
export type RatelimitOwner = { keyId: string } | { identityId: string };

export interface RatelimitConfigStore {
  /** The owner's named limits, by name (byte order). */
  load(owner: RatelimitOwner): Maybe<RatelimitConfig[]>;
  /** The limits of several identities, by identity id (each list by name). */
  loadForIdentities(identityIds: readonly string[]): Maybe<Map<string, RatelimitConfig[]>>;
  delete(configIds: readonly string[]): Maybe<void>;
  update(configId: string, values: { limit: number; durationMs: number; autoApply: boolean }, nowMs: number): Maybe<void>;
  insert(row: { id: string; workspaceId: string; owner: RatelimitOwner; name: string; limit: number; durationMs: number; autoApply: boolean; createdAt: number }): Maybe<void>;
}

const SUMMARY = { id: identities.id, externalId: identities.externalId, meta: identities.meta };
/** The meta column without its JSON mapping: the text as stored. */
const LIST_ROW = { id: identities.id, externalId: identities.externalId, metaText: sql<string | null>`${identities.meta}` };

export class SqliteIdentityStore implements IdentityStore {
  constructor(private readonly db: Db) {}

  findByExternalId(workspaceId: string, externalId: string): IdentitySummary | undefined {
    return this.db.select(SUMMARY).from(identities)
      .where(and(eq(identities.workspaceId, workspaceId), eq(identities.externalId, externalId), isNull(identities.deletedAt))).get();
  }

  findById(identityId: string): IdentitySummary | undefined {
    return this.db.select(SUMMARY).from(identities).where(and(eq(identities.id, identityId), isNull(identities.deletedAt))).get();
  }

  findInWorkspace(workspaceId: string, identityId: string): IdentitySummary | undefined {
    return this.db.select(SUMMARY).from(identities)
      .where(and(eq(identities.id, identityId), eq(identities.workspaceId, workspaceId), isNull(identities.deletedAt))).get();
  }

  insert(row: { id: string; workspaceId: string; externalId: string; meta: Record<string, unknown>; createdAt: number }): void {
    rethrowDuplicate(() => this.db.insert(identities).values(row).run());
  }

  update(identityId: string, change: { meta?: Record<string, unknown>; updatedAt: number }): void {
    this.db.update(identities).set(change).where(eq(identities.id, identityId)).run();
  }

  markDeleted(identityId: string, nowMs: number): void {
    this.db.update(identities).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(identities.id, identityId)).run();
  }

  list(query: IdentityListQuery): IdentityListRow[] {
    return this.db.select(LIST_ROW).from(identities).where(listConditions(query)).orderBy(asc(identities.id)).limit(query.limit).all();
  }

  listSizes(query: IdentityListQuery): SizedRow[] {
    return this.db.select({ id: identities.id, bytes: sql<number>`coalesce(octet_length(${identities.meta}), 0)` })
      .from(identities).where(listConditions(query)).orderBy(asc(identities.id)).limit(query.limit).all();
  }
}

function listConditions(query: IdentityListQuery): SQL | undefined {
  const conditions: SQL[] = [eq(identities.workspaceId, query.workspaceId), isNull(identities.deletedAt)];
  if (query.cursor !== undefined) conditions.push(gte(identities.id, query.cursor));
  if (query.until !== undefined) conditions.push(lte(identities.id, query.until));
  if (query.search !== undefined) {
    const pattern = likeContains(query.search);
    const matches = or(sql`${identities.id} LIKE ${pattern} ESCAPE '\\'`, sql`${identities.externalId} LIKE ${pattern} ESCAPE '\\'`);
    if (matches) conditions.push(matches);
  }
  return and(...conditions);
}

const CONFIG = { id: ratelimitConfigs.id, name: ratelimitConfigs.name, limit: ratelimitConfigs.limit, duration: ratelimitConfigs.durationMs, autoApply: ratelimitConfigs.autoApply };

export class SqliteRatelimitConfigStore implements RatelimitConfigStore {
  constructor(private readonly db: Db) {}

  load(owner: RatelimitOwner): RatelimitConfig[] {
    const where = "keyId" in owner ? eq(ratelimitConfigs.keyId, owner.keyId) : eq(ratelimitConfigs.identityId, owner.identityId);
    return this.db.select(CONFIG).from(ratelimitConfigs).where(where).orderBy(ratelimitConfigs.name).all();
  }

  loadForIdentities(identityIds: readonly string[]): Map<string, RatelimitConfig[]> {
    const byIdentity = new Map<string, RatelimitConfig[]>(identityIds.map((id) => [id, []]));
    if (identityIds.length === 0) return byIdentity;
    const rows = this.db.select({ identityId: ratelimitConfigs.identityId, ...CONFIG })
      .from(ratelimitConfigs).where(inArray(ratelimitConfigs.identityId, [...identityIds])).orderBy(ratelimitConfigs.name).all();
    for (const { identityId, ...config } of rows) {
      if (identityId !== null) byIdentity.get(identityId)?.push(config);
    }
    return byIdentity;
  }

  delete(configIds: readonly string[]): void {
    if (configIds.length > 0) this.db.delete(ratelimitConfigs).where(inArray(ratelimitConfigs.id, [...configIds])).run();
  }

  update(configId: string, values: { limit: number; durationMs: number; autoApply: boolean }, nowMs: number): void {
    this.db.update(ratelimitConfigs).set({ ...values, updatedAt: nowMs }).where(eq(ratelimitConfigs.id, configId)).run();
  }

  insert(row: { id: string; workspaceId: string; owner: RatelimitOwner; name: string; limit: number; durationMs: number; autoApply: boolean; createdAt: number }): void {
    const { owner, ...values } = row;
    this.db.insert(ratelimitConfigs).values({ ...values, ...owner }).run();
  }
}
