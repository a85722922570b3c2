/** The records of APIs on PostgreSQL (cluster mode): records/apis.ts's interface, with SQLite's answers. */
import { and, asc, eq, gte, inArray, isNull, or, type SQL } from "drizzle-orm";
import { byBytes, likeAscii, type PgDb } from "../db.ts";
import { apis, keySpaces } from "../schema/index.ts";
import { likeContains } from "../../../lib/like.ts";
import type { ApiListQuery, ApiListRow, ApiRecord, ApiStore } from "../../records/apis.ts";

const RECORD = { id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId, deleteProtection: apis.deleteProtection };

export class PgApiStore implements ApiStore {
  constructor(private readonly db: PgDb) {}

  async findLive(workspaceId: string, apiId: string): Promise<ApiRecord | undefined> {
    const [row] = await this.db.select(RECORD).from(apis)
      .where(and(eq(apis.id, apiId), eq(apis.workspaceId, workspaceId), isNull(apis.deletedAt)));
    return row;
  }

  async findByKeySpace(workspaceId: string, keySpaceId: string): Promise<ApiRecord | undefined> {
    const [row] = await this.db.select(RECORD).from(apis)
      .where(and(eq(apis.keySpaceId, keySpaceId), eq(apis.workspaceId, workspaceId), isNull(apis.deletedAt)));
    return row;
  }

  async create(api: { id: string; keySpaceId: string; workspaceId: string; name: string; createdAt: number }): Promise<void> {
    await this.db.insert(keySpaces).values({ id: api.keySpaceId, workspaceId: api.workspaceId, createdAt: api.createdAt });
    await this.db.insert(apis).values(api);
  }

  async markDeleted(apiId: string, nowMs: number): Promise<void> {
    await this.db.update(apis).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(apis.id, apiId));
  }

  async list(query: ApiListQuery): Promise<ApiListRow[]> {
    const conditions: SQL[] = [eq(apis.workspaceId, query.workspaceId), isNull(apis.deletedAt)];
    if (query.ids !== null) conditions.push(inArray(apis.id, query.ids));
    if (query.cursor !== undefined) conditions.push(gte(byBytes(apis.id), query.cursor));
    if (query.search !== undefined) {
      const pattern = likeContains(query.search);
      const matches = or(likeAscii(apis.id, pattern), likeAscii(apis.name, pattern));
      if (matches) conditions.push(matches);
    }
    return this.db.select({ id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId }).from(apis)
      .where(and(...conditions)).orderBy(asc(byBytes(apis.id))).limit(query.limit);
  }
}
