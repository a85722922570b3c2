/**
 * The records of APIs and their key spaces, as the services read and write them: the interface
 * both backends implement, and the embedded one on drizzle over SQLite (PostgreSQL's: pg/records).
 */
import { and, asc, eq, gte, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { apis, keySpaces } from "../schema/index.ts";
import { likeContains } from "../../lib/like.ts";

export interface ApiRecord {
  id: string;
  name: string;
  keySpaceId: string;
  deleteProtection: boolean;
}

export interface ApiListRow {
  id: string;
  name: string;
  keySpaceId: string;
}

export interface ApiListQuery {
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

export interface ApiStore {
  /** The live API with this id in the workspace. */
  findLive(workspaceId: string, apiId: string): Maybe<ApiRecord | undefined>;
  /** The live API that owns a key space. */
  findByKeySpace(workspaceId: string, keySpaceId: string): Maybe<ApiRecord | undefined>;
  /** Inserts an API and its key space. */
  create(api: { id: string; keySpaceId: string; workspaceId: string; name: string; createdAt: number }): Maybe<void>;
  /** Soft-deletes an API. */
  markDeleted(apiId: string, nowMs: number): Maybe<void>;
  /** Live APIs by id in byte order. */
  list(query: ApiListQuery): Maybe<ApiListRow[]>;
}

const RECORD = { id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId, deleteProtection: apis.deleteProtection };

export class SqliteApiStore implements ApiStore {
  constructor(private readonly db: Db) {}

  findLive(workspaceId: string, apiId: string): ApiRecord | undefined {
    return this.db.select(RECORD).from(apis)
      .where(and(eq(apis.id, apiId), eq(apis.workspaceId, workspaceId), isNull(apis.deletedAt))).get();
  }

  findByKeySpace(workspaceId: string, keySpaceId: string): ApiRecord | undefined {
    return this.db.select(RECORD).from(apis)
      .where(and(eq(apis.keySpaceId, keySpaceId), eq(apis.workspaceId, workspaceId), isNull(apis.deletedAt))).get();
  }

  create(api: { id: string; keySpaceId: string; workspaceId: string; name: string; createdAt: number }): void {
    this.db.insert(keySpaces).values({ id: api.keySpaceId, workspaceId: api.workspaceId, createdAt: api.createdAt }).run();
    this.db.insert(apis).values(api).run();
  }

  markDeleted(apiId: string, nowMs: number): void {
    this.db.update(apis).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(apis.id, apiId)).run();
  }

  list(query: ApiListQuery): ApiListRow[] {
    const conditions: SQL[] = [eq(apis.workspaceId, query.workspaceId), isNull(apis.deletedAt)];
    if (query.ids !== null) conditions.push(inArray(apis.id, query.ids));
    if (query.cursor !== undefined) conditions.push(gte(apis.id, query.cursor));
    if (query.search !== undefined) {
      const pattern = likeContains(query.search);
      const matches = or(sql`${apis.id} LIKE ${pattern} ESCAPE '\\'`, sql`${apis.name} LIKE ${pattern} ESCAPE '\\'`);
      if (matches) conditions.push(matches);
    }
    return this.db.select({ id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId }).from(apis)
      .where(and(...conditions)).orderBy(asc(apis.id)).limit(query.limit).all();
  }
}
