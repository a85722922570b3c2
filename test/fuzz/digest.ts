/**
 * A digest of everything stored: every row of every table (`SELECT * FROM` each), hashed per
 * table, so a refused request can be shown to have changed nothing and, when it did, which tables.
 */
import { getTableName } from "drizzle-orm";
import { ratelimitLog } from "../../src/storage/schema/index.ts";
import type { Harness } from "../support/harness.ts";

export interface Digest {
  hash: string;
  tables: Map<string, string>;
  /** The tables whose rows differ from `earlier`'s. */
  changedSince(earlier: Digest): string[];
  /** Those of them that a request can have changed: all but WRITTEN_BY_TIMERS. */
  changedByRequestsSince(earlier: Digest): string[];
}

/**
 * Tables that only the service's timers write, never a request: the rate-limit windows' log (its
 * flush, compaction and prune). A campaign runs longer than the slowest flush interval (60 s), so
 * a change there between two digests says nothing about the request sent in between.
 */
export const WRITTEN_BY_TIMERS: ReadonlySet<string> = new Set([getTableName(ratelimitLog)]);

export function digest(h: Harness): Digest {
  const db = h.embedded.storage.sqlite;
  const names = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => r.name);
  const tables = new Map<string, string>();
  for (const name of names) {
    const rows = db.query(`SELECT * FROM "${name.replaceAll('"', '""')}"`).values();
    tables.set(name, Bun.hash(JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v))).toString(16));
  }
  return {
    hash: [...tables].map(([n, hsh]) => `${n}:${hsh}`).join("|"),
    tables,
    changedSince: (earlier) => names.filter((n) => earlier.tables.get(n) !== tables.get(n)),
    changedByRequestsSince: (earlier) => names.filter((n) => !WRITTEN_BY_TIMERS.has(n) && earlier.tables.get(n) !== tables.get(n)),
  };
}
