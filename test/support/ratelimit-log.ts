/** Reads the rate-limit window log of a database file, for tests that look at what was saved. */
import type { Database } from "bun:sqlite";
import { decodeChunk } from "../../src/services/ratelimit/index.ts";

/** The count the log holds last for `identifier` (any scope), or undefined when it holds none. */
export function loggedCount(db: Database, identifier: string): number | undefined {
  let count: number | undefined;
  for (const { data } of db.query<{ data: string }, []>("SELECT data FROM ratelimit_log ORDER BY seq").iterate()) {
    for (const row of decodeChunk(data)) if (row.identifier === identifier) count = row.count;
  }
  return count;
}
