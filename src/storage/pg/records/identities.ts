/** The records of identities and of named rate limits on PostgreSQL (cluster mode), as records/identities.ts answers. */
import { and, asc, eq, gte, inArray, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import { byBytes, likeAscii, rethrowPgDuplicate, type PgDb } from "../db.ts";
import { identities, ratelimitConfigs } from "../schema/index.ts";
import { likeContains } from "../../../lib/like.ts";
import type {
  IdentityListQuery, IdentityListRow, IdentityStore, IdentitySummary, RatelimitConfig, RatelimitConfigStore, RatelimitOwner,
} from "../../records/identities.ts";
import type { SizedRow } from "../../records/sized-rows.ts";

const SUMMARY = { id: identities.id, externalId: identities.externalId, meta: identities.meta };
/** The meta column without its JSON mapping: the text as stored. */
const LIST_ROW = { id: identities.id, externalId: identities.externalId, metaText: sql<string | null>`${identities.meta}` };

export class PgIdentityStore implements IdentityStore {
  constructor(private readonly db: PgDb) {}

  async findByExternalId(workspaceId: string, externalId: string): Promise<IdentitySummary | undefined> {
    const [row] = await this.db.select(SUMMARY).from(identities)
      .where(and(eq(identities.workspaceId, workspaceId), eq(identities.externalId, externalId), isNull(identities.deletedAt)));
    return row;
  }

  async findById(identityId: string): Promise<IdentitySummary | undefined> {
    const [row] = await this.db.select(SUMMARY).from(identities).where(and(eq(identities.id, identityId), isNull(identities.deletedAt)));
    return row;
  }

  async findInWorkspace(workspaceId: string, identityId: string): Promise<IdentitySummary | undefined> {
    const [row] = await this.db.select(SUMMARY).from(identities)
      .where(and(eq(identities.id, identityId), eq(identities.workspaceId, workspaceId), isNull(identities.deletedAt)));
    return row;
  }

  async insert(row: { id: string; workspaceId: string; externalId: string; meta: Record<string, unknown>; createdAt: number }): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(identities).values(row);
    });
  }

  async update(identityId: string, change: { meta?: Record<string, unknown>; updatedAt: number }): Promise<void> {
    await this.db.update(identities).set(change).where(eq(identities.id, identityId));
  }

  async markDeleted(identityId: string, nowMs: number): Promise<void> {
    await this.db.update(identities).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(identities.id, identityId));
  }

  async list(query: IdentityListQuery): Promise<IdentityListRow[]> {
    return this.db.select(LIST_ROW).from(identities).where(listConditions(query)).orderBy(asc(byBytes(identities.id))).limit(query.limit);
  }

  async listSizes(query: IdentityListQuery): Promise<SizedRow[]> {
    // octet_length of a text reads the stored value's header only, not a TOASTed meta's megabyte.
    return this.db.select({ id: identities.id, bytes: sql<number>`coalesce(octet_length(${identities.meta}), 0)::int` })
      .from(identities).where(listConditions(query)).orderBy(asc(byBytes(identities.id))).limit(query.limit);
  }
}

function listConditions(query: IdentityListQuery): SQL | undefined {
  const conditions: SQL[] = [eq(identities.workspaceId, query.workspaceId), isNull(identities.deletedAt)];
  if (query.cursor !== undefined) conditions.push(gte(byBytes(identities.id), query.cursor));
  if (query.until !== undefined) conditions.push(lte(byBytes(identities.id), query.until));
  if (query.search !== undefined) {
    const pattern = likeContains(query.search);
    const matches = or(likeAscii(identities.id, pattern), likeAscii(identities.externalId, pattern));
    if (matches) conditions.push(matches);
  }
  return and(...conditions);
}

const CONFIG = { id: ratelimitConfigs.id, name: ratelimitConfigs.name, limit: ratelimitConfigs.limit, duration: ratelimitConfigs.durationMs, autoApply: ratelimitConfigs.autoApply };

export class PgRatelimitConfigStore implements RatelimitConfigStore {
  constructor(private readonly db: PgDb) {}

  async load(owner: RatelimitOwner): Promise<RatelimitConfig[]> {
    const where = "keyId" in owner ? eq(ratelimitConfigs.keyId, owner.keyId) : eq(ratelimitConfigs.identityId, owner.identityId);
    return this.db.select(CONFIG).from(ratelimitConfigs).where(where).orderBy(byBytes(ratelimitConfigs.name));
  }

  async loadForIdentities(identityIds: readonly string[]): Promise<Map<string, RatelimitConfig[]>> {
    const byIdentity = new Map<string, RatelimitConfig[]>(identityIds.map((id) => [id, []]));
    if (identityIds.length === 0) return byIdentity;
    const rows = await this.db.select({ identityId: ratelimitConfigs.identityId, ...CONFIG })
      .from(ratelimitConfigs).where(inArray(ratelimitConfigs.identityId, [...identityIds])).orderBy(byBytes(ratelimitConfigs.name));
    for (const { identityId, ...config } of rows) {
      if (identityId !== null) byIdentity.get(identityId)?.push(config);
    }
    return byIdentity;
  }

  async delete(configIds: readonly string[]): Promise<void> {
    if (configIds.length > 0) await this.db.delete(ratelimitConfigs).where(inArray(ratelimitConfigs.id, [...configIds]));
  }

  async update(configId: string, values: { limit: number; durationMs: number; autoApply: boolean }, nowMs: number): Promise<void> {
    await this.db.update(ratelimitConfigs).set({ ...values, updatedAt: nowMs }).where(eq(ratelimitConfigs.id, configId));
  }

  async insert(row: { id: string; workspaceId: string; owner: RatelimitOwner; name: string; limit: number; durationMs: number; autoApply: boolean; createdAt: number }): Promise<void> {
    const { owner, ...values } = row;
    await this.db.insert(ratelimitConfigs).values({ ...values, ...owner });
  }
}
