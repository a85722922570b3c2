/**
 * A digest of everything stored: every row of every table (`SELECT * FROM` each), hashed per
 * table, so a refused request can be shown to have changed nothing and, when it did, which tables.
 */
import type { Harness } from "../support/harness.ts";

export interface Digest {
  hash: string;
  tables: Map<string, string>;
  /** The tables whose rows differ from `earlier`'s. */
  changedSince(earlier: Digest): string[];
}

export function digest(h: Harness): Digest {
  const db = h.running.storage.sqlite;
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
  };
}
