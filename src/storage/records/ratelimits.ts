/**
 * The records of rate-limit namespaces and their per-identifier overrides (embedded: drizzle over
 * SQLite; PostgreSQL's: pg/records). Both are soft-deleted; override reads see live ones only.
 * The SQLite override store also hands out its override lookup as a statement compiled once, and
 * its count and wildcard queries unrun: a check that loads a namespace's overrides runs them on its
 * own path, synchronously, and their plans are held to the indexes made for them.
 */
import { and, asc, count, eq, gte, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { ratelimitNamespaces, ratelimitOverrides } from "../schema/index.ts";
import { likeContains } from "../../lib/like.ts";
import { rethrowDuplicate } from "./errors.ts";

export interface NamespaceRecord {
  id: string;
  name: string;
  deleted: boolean;
}

export interface NamespaceListQuery {
  workspaceId: string;
  /** Only these ids; null for all. */
  ids: string[] | null;
  /** From this id (inclusive), in byte order. */
  cursor?: string;
  /** id or name contains it, ASCII case-insensitively; already trimmed, non-empty. */
  search?: string;
  /** Rows to return at most. */
  limit: number;
}

/** createdAt: Unix ms. */
export interface NamespaceListRow {
  id: string;
  name: string;
  createdAt: number;
}

export interface NamespaceStore {
  /** The workspace's namespace with this id, deleted ones included. */
  findById(workspaceId: string, namespaceId: string): Maybe<NamespaceRecord | undefined>;
  /** The workspace's namespace with this name, deleted ones included. */
  findByName(workspaceId: string, name: string): Maybe<NamespaceRecord | undefined>;
  /** Inserts a namespace unless its workspace has one of that name; answers whether it did. */
  insert(row: { id: string; workspaceId: string; name: string; createdAt: number }): Maybe<boolean>;
  /** Live namespaces by id in byte order. */
  list(query: NamespaceListQuery): Maybe<NamespaceListRow[]>;
}

/** A live override. duration: ms; createdAt: Unix ms. */
export interface OverrideRecord {
  id: string;
  identifier: string;
  limit: number;
  duration: number;
  createdAt: number;
}

export interface OverrideStore {
  /** The live override stored with exactly this identifier (a pattern is compared as written). */
  findLive(namespaceId: string, identifier: string): Maybe<OverrideRecord | undefined>;
  /** Every live override of a namespace, in no order. */
  loadLive(namespaceId: string): Maybe<OverrideRecord[]>;
  /** How many live overrides a namespace has, counted no further than `atMost` (no more rows are read). */
  countLive(namespaceId: string, atMost: number): Maybe<number>;
  /** The live overrides of a namespace whose identifier holds a `*`, in no order. */
  loadLiveWildcards(namespaceId: string): Maybe<OverrideRecord[]>;
  /** Up to `limit` live overrides by id in byte order, from `cursor` (inclusive) when given. */
  listLive(namespaceId: string, page: { limit: number; cursor?: string }): Maybe<OverrideRecord[]>;
  /** Inserts a live override; a live one of the namespace with the same identifier throws DuplicateRecord. */
  insert(row: { id: string; workspaceId: string; namespaceId: string; identifier: string; limit: number; durationMs: number; createdAt: number }): Maybe<void>;
  /** Sets an override's limit and duration. */
  update(overrideId: string, values: { limit: number; durationMs: number }, nowMs: number): Maybe<void>;
  /** Soft-deletes an override. */
  markDeleted(overrideId: string, nowMs: number): Maybe<void>;
}

const NAMESPACE = { id: ratelimitNamespaces.id, name: ratelimitNamespaces.name, deletedAt: ratelimitNamespaces.deletedAt };

function toNamespace(row: { id: string; name: string; deletedAt: number | null } | undefined): NamespaceRecord | undefined {
  return row && { id: row.id, name: row.name, deleted: row.deletedAt !== null };
}

export class SqliteNamespaceStore implements NamespaceStore {
  constructor(private readonly db: Db) {}

  findById(workspaceId: string, namespaceId: string): NamespaceRecord | undefined {
    return toNamespace(this.db.select(NAMESPACE).from(ratelimitNamespaces)
      .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.id, namespaceId))).get());
  }

  findByName(workspaceId: string, name: string): NamespaceRecord | undefined {
    return toNamespace(this.db.select(NAMESPACE).from(ratelimitNamespaces)
      .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.name, name))).get());
  }

  insert(row: { id: string; workspaceId: string; name: string; createdAt: number }): boolean {
    return this.db.insert(ratelimitNamespaces).values(row).onConflictDoNothing().returning({ id: ratelimitNamespaces.id }).all().length > 0;
  }

  list(query: NamespaceListQuery): NamespaceListRow[] {
    const ns = ratelimitNamespaces;
    const conditions: SQL[] = [eq(ns.workspaceId, query.workspaceId), isNull(ns.deletedAt)];
    if (query.ids !== null) conditions.push(inArray(ns.id, query.ids));
    if (query.cursor !== undefined) conditions.push(gte(ns.id, query.cursor));
    if (query.search !== undefined) {
      const pattern = likeContains(query.search);
      const matches = or(sql`${ns.id} LIKE ${pattern} ESCAPE '\\'`, sql`${ns.name} LIKE ${pattern} ESCAPE '\\'`);
      if (matches) conditions.push(matches);
    }
    return this.db.select({ id: ns.id, name: ns.name, createdAt: ns.createdAt }).from(ns)
      .where(and(...conditions)).orderBy(asc(ns.id)).limit(query.limit).all();
  }
}

const OVERRIDE = {
  id: ratelimitOverrides.id, identifier: ratelimitOverrides.identifier, limit: ratelimitOverrides.limit,
  duration: ratelimitOverrides.durationMs, createdAt: ratelimitOverrides.createdAt,
};

const liveIn = (namespaceId: string) => and(eq(ratelimitOverrides.namespaceId, namespaceId), isNull(ratelimitOverrides.deletedAt));

export class SqliteOverrideStore implements OverrideStore {
  constructor(private readonly db: Db) {}

  findLive(namespaceId: string, identifier: string): OverrideRecord | undefined {
    return this.db.select(OVERRIDE).from(ratelimitOverrides)
      .where(and(eq(ratelimitOverrides.namespaceId, namespaceId), eq(ratelimitOverrides.identifier, identifier), isNull(ratelimitOverrides.deletedAt))).get();
  }

  /** findLive compiled once: each call then runs the statement without building its query again. */
  prepareFindLive(): (namespaceId: string, identifier: string) => OverrideRecord | undefined {
    const statement = this.db.select(OVERRIDE).from(ratelimitOverrides).where(and(
      eq(ratelimitOverrides.namespaceId, sql.placeholder("namespaceId")), eq(ratelimitOverrides.identifier, sql.placeholder("identifier")),
      isNull(ratelimitOverrides.deletedAt),
    )).prepare();
    return (namespaceId, identifier) => statement.get({ namespaceId, identifier });
  }

  loadLive(namespaceId: string): OverrideRecord[] {
    return this.db.select(OVERRIDE).from(ratelimitOverrides).where(liveIn(namespaceId)).all();
  }

  countLive(namespaceId: string, atMost: number): number {
    return this.countLiveQuery(namespaceId, atMost).get()?.n ?? 0;
  }

  /** The query of countLive: a bounded walk of ratelimit_overrides_live_uq. */
  countLiveQuery(namespaceId: string, atMost: number) {
    const some = this.db.select({ identifier: ratelimitOverrides.identifier }).from(ratelimitOverrides).where(liveIn(namespaceId)).limit(atMost).as("some");
    return this.db.select({ n: count() }).from(some);
  }

  loadLiveWildcards(namespaceId: string): OverrideRecord[] {
    return this.liveWildcardsQuery(namespaceId).all();
  }

  /** The query of loadLiveWildcards; its condition is the partial index ratelimit_overrides_live_wildcard_idx's, so only wildcards are read. */
  liveWildcardsQuery(namespaceId: string) {
    return this.db.select(OVERRIDE).from(ratelimitOverrides).where(and(liveIn(namespaceId), sql`instr(${ratelimitOverrides.identifier}, '*') > 0`));
  }

  listLive(namespaceId: string, page: { limit: number; cursor?: string }): OverrideRecord[] {
    const where = [eq(ratelimitOverrides.namespaceId, namespaceId), isNull(ratelimitOverrides.deletedAt)];
    if (page.cursor !== undefined) where.push(gte(ratelimitOverrides.id, page.cursor));
    return this.db.select(OVERRIDE).from(ratelimitOverrides).where(and(...where)).orderBy(asc(ratelimitOverrides.id)).limit(page.limit).all();
  }

  insert(row: { id: string; workspaceId: string; namespaceId: string; identifier: string; limit: number; durationMs: number; createdAt: number }): void {
    rethrowDuplicate(() => this.db.insert(ratelimitOverrides).values(row).run());
  }

  update(overrideId: string, values: { limit: number; durationMs: number }, nowMs: number): void {
    this.db.update(ratelimitOverrides).set({ limit: values.limit, durationMs: values.durationMs, updatedAt: nowMs })
      .where(eq(ratelimitOverrides.id, overrideId)).run();
  }

  markDeleted(overrideId: string, nowMs: number): void {
    this.db.update(ratelimitOverrides).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(ratelimitOverrides.id, overrideId)).run();
  }
}
