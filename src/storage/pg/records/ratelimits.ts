/**
 * The records of rate-limit namespaces and overrides on PostgreSQL (cluster mode), as
 * records/ratelimits.ts answers. The wildcard condition is spelled as the partial index
 * ratelimit_overrides_live_wildcard_idx spells it (`strpos`), so that PostgreSQL reads that index.
 */
import { and, asc, count, eq, gte, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { byBytes, likeAscii, rethrowPgDuplicate, type PgDb } from "../db.ts";
import { ratelimitNamespaces, ratelimitOverrides } from "../schema/index.ts";
import { likeContains } from "../../../lib/like.ts";
import type {
  NamespaceListQuery, NamespaceListRow, NamespaceRecord, NamespaceStore, OverrideRecord, OverrideStore,
} from "../../records/ratelimits.ts";

const NAMESPACE = { id: ratelimitNamespaces.id, name: ratelimitNamespaces.name, deletedAt: ratelimitNamespaces.deletedAt };

function toNamespace(row: { id: string; name: string; deletedAt: number | null } | undefined): NamespaceRecord | undefined {
  return row && { id: row.id, name: row.name, deleted: row.deletedAt !== null };
}

export class PgNamespaceStore implements NamespaceStore {
  constructor(private readonly db: PgDb) {}

  async findById(workspaceId: string, namespaceId: string): Promise<NamespaceRecord | undefined> {
    const [row] = await this.db.select(NAMESPACE).from(ratelimitNamespaces)
      .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.id, namespaceId)));
    return toNamespace(row);
  }

  async findByName(workspaceId: string, name: string): Promise<NamespaceRecord | undefined> {
    const [row] = await this.db.select(NAMESPACE).from(ratelimitNamespaces)
      .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.name, name)));
    return toNamespace(row);
  }

  async insert(row: { id: string; workspaceId: string; name: string; createdAt: number }): Promise<boolean> {
    const inserted = await this.db.insert(ratelimitNamespaces).values(row).onConflictDoNothing().returning({ id: ratelimitNamespaces.id });
    return inserted.length > 0;
  }

  async list(query: NamespaceListQuery): Promise<NamespaceListRow[]> {
    const ns = ratelimitNamespaces;
    const conditions: SQL[] = [eq(ns.workspaceId, query.workspaceId), isNull(ns.deletedAt)];
    if (query.ids !== null) conditions.push(inArray(ns.id, query.ids));
    if (query.cursor !== undefined) conditions.push(gte(byBytes(ns.id), query.cursor));
    if (query.search !== undefined) {
      const pattern = likeContains(query.search);
      const matches = or(likeAscii(ns.id, pattern), likeAscii(ns.name, pattern));
      if (matches) conditions.push(matches);
    }
    return this.db.select({ id: ns.id, name: ns.name, createdAt: ns.createdAt }).from(ns)
      .where(and(...conditions)).orderBy(asc(byBytes(ns.id))).limit(query.limit);
  }
}

const OVERRIDE = {
  id: ratelimitOverrides.id, identifier: ratelimitOverrides.identifier, limit: ratelimitOverrides.limit,
  duration: ratelimitOverrides.durationMs, createdAt: ratelimitOverrides.createdAt,
};

const liveIn = (namespaceId: string) => and(eq(ratelimitOverrides.namespaceId, namespaceId), isNull(ratelimitOverrides.deletedAt));

export class PgOverrideStore implements OverrideStore {
  constructor(private readonly db: PgDb) {}

  async findLive(namespaceId: string, identifier: string): Promise<OverrideRecord | undefined> {
    const [row] = await this.db.select(OVERRIDE).from(ratelimitOverrides)
      .where(and(eq(ratelimitOverrides.namespaceId, namespaceId), eq(ratelimitOverrides.identifier, identifier), isNull(ratelimitOverrides.deletedAt)));
    return row;
  }

  async loadLive(namespaceId: string): Promise<OverrideRecord[]> {
    return this.db.select(OVERRIDE).from(ratelimitOverrides).where(liveIn(namespaceId));
  }

  async countLive(namespaceId: string, atMost: number): Promise<number> {
    const some = this.db.select({ identifier: ratelimitOverrides.identifier }).from(ratelimitOverrides).where(liveIn(namespaceId)).limit(atMost).as("some");
    const [row] = await this.db.select({ n: count() }).from(some);
    return row?.n ?? 0;
  }

  async loadLiveWildcards(namespaceId: string): Promise<OverrideRecord[]> {
    return this.db.select(OVERRIDE).from(ratelimitOverrides).where(and(liveIn(namespaceId), sql`strpos(${ratelimitOverrides.identifier}, '*') > 0`));
  }

  async listLive(namespaceId: string, page: { limit: number; cursor?: string }): Promise<OverrideRecord[]> {
    const where = [eq(ratelimitOverrides.namespaceId, namespaceId), isNull(ratelimitOverrides.deletedAt)];
    if (page.cursor !== undefined) where.push(gte(byBytes(ratelimitOverrides.id), page.cursor));
    return this.db.select(OVERRIDE).from(ratelimitOverrides).where(and(...where)).orderBy(asc(byBytes(ratelimitOverrides.id))).limit(page.limit);
  }

  async insert(row: { id: string; workspaceId: string; namespaceId: string; identifier: string; limit: number; durationMs: number; createdAt: number }): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(ratelimitOverrides).values(row);
    });
  }

  async update(overrideId: string, values: { limit: number; durationMs: number }, nowMs: number): Promise<void> {
    await this.db.update(ratelimitOverrides).set({ limit: values.limit, durationMs: values.durationMs, updatedAt: nowMs })
      .where(eq(ratelimitOverrides.id, overrideId));
  }

  async markDeleted(overrideId: string, nowMs: number): Promise<void> {
    await this.db.update(ratelimitOverrides).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(ratelimitOverrides.id, overrideId));
  }
}
