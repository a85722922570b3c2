/**
 * Random and mutated inputs for the two little languages the API parses: analytics SQL (the guard
 * in front of SQLite) and the permission query of verifyKey. Each generator mixes well-formed
 * queries, their token-level mutations (drop, repeat, swap, insert a hostile piece) and strings of
 * random pieces, so both the accepted and the refused paths are exercised.
 */
import { intBetween, pick, type Rng } from "../support/prng.ts";

const VALID_SQL = [
  "SELECT SUM(count) AS total FROM key_verifications_per_day_v1 WHERE time > now() - INTERVAL 7 DAY",
  "SELECT external_id, SUM(count) AS total FROM key_verifications_per_day_v1 GROUP BY external_id ORDER BY total DESC LIMIT 10",
  "SELECT outcome, count() AS n, countIf(outcome = 'VALID') AS ok FROM key_verifications_v1 GROUP BY outcome",
  "SELECT toStartOfDay(time) AS day, sumIf(count, outcome = 'VALID') FROM key_verifications_per_hour_v1 GROUP BY day ORDER BY day",
  "SELECT key_id, max(time) FROM key_verifications_v1 WHERE outcome IN ('VALID', 'NOT_FOUND') AND time >= now() - INTERVAL 1 HOUR GROUP BY key_id LIMIT 5",
  "SELECT * FROM key_verifications_per_month_v1 LIMIT 3",
  "WITH t AS (SELECT outcome FROM key_verifications_v1) SELECT count() FROM t",
];

const SQL_PIECES = [
  "SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "OFFSET", "HAVING", "UNION ALL", "UNION", "JOIN", "ON", "AS", "AND", "OR", "NOT",
  "IN", "BETWEEN", "LIKE", "IS NULL", "CASE WHEN", "THEN", "ELSE", "END", "DISTINCT", "WITH", "*", ",", "(", ")", ";", "=", "<>", "+", "-", "/", "%", "||",
  "key_verifications_v1", "key_verifications_per_day_v1", "key_verifications_per_minute_v1", "keys", "root_keys", "sqlite_master", "main.keys", "pragma_table_info('keys')",
  "count", "time", "outcome", "key_id", "external_id", "tags", "workspace_id", "SUM(count)", "count()", "countIf(outcome = 'VALID')", "sumIf(count, 1)",
  "now()", "toStartOfDay(time)", "INTERVAL 1 DAY", "INTERVAL -99999999999 YEAR", "load_extension('x')", "randomblob(1000000000)", "readfile('/etc/passwd')",
  "zeroblob(2147483647)", "printf('%999999999d', 1)", "tollgate_watchdog()", "ATTACH DATABASE ':memory:' AS x", "PRAGMA writable_schema = 1", "INSERT INTO keys VALUES (1)",
  "DELETE FROM keys", "1", "0", "-1", "1e400", "9223372036854775808", "0x7fffffff", "'x'", "''", "'''", "\"time\"", "`time`", "[time]", "?", ":a", "@a", "$a",
  "--", "/*", "*/", "\\", "\u0000", "é", "💥", "\u202e", "\n", "\t",
];

function tokens(sql: string): string[] {
  return sql.split(/(\s+|[(),])/).filter((t) => t.trim() !== "");
}

function mutateTokens(next: Rng, base: string[], pieces: readonly string[]): string {
  const t = [...base];
  const edits = intBetween(next, 1, 3);
  for (let i = 0; i < edits; i++) {
    const at = intBetween(next, 0, Math.max(0, t.length - 1));
    const op = intBetween(next, 0, 3);
    if (op === 0) t.splice(at, 1);
    else if (op === 1) t.splice(at, 0, t[at] ?? "");
    else if (op === 2) t.splice(at, 0, pick(next, pieces));
    else [t[at], t[t.length - 1 - at]] = [t[t.length - 1 - at]!, t[at]!];
  }
  return t.join(" ");
}

/** One analytics query: a valid one, a mutation of one, or a string of random pieces. */
export function randomSql(next: Rng): string {
  const kind = next();
  if (kind < 0.15) return pick(next, VALID_SQL);
  if (kind < 0.7) return mutateTokens(next, tokens(pick(next, VALID_SQL)), SQL_PIECES);
  const length = intBetween(next, 1, 25);
  return Array.from({ length }, () => pick(next, SQL_PIECES)).join(next() < 0.8 ? " " : "");
}

const PERM_PIECES = [
  "a", "b.c", "docs.read", "x.*", "*", "AND", "OR", "and", "or", "NOT", "(", ")", "((", "))", " ", "\t", "\n", "é", "💥", "$", "'", "\"", "\\",
  ";", "--", "_", "-", ":", "/", "0", "AN", "ORR", "a".repeat(200), "\u0000", "\u202e",
];

/** One permission query: well-formed, mutated, random pieces, or deeply nested. */
export function randomPermissionQuery(next: Rng): string {
  const kind = next();
  if (kind < 0.1) {
    const depth = intBetween(next, 90, 600);
    return "(".repeat(depth) + "a" + ")".repeat(next() < 0.5 ? depth : depth - 1);
  }
  if (kind < 0.2) return Array.from({ length: intBetween(next, 50, 300) }, () => pick(next, ["a", "b.c"])).join(pick(next, [" AND ", " OR "]));
  if (kind < 0.5) return mutateTokens(next, ["(", "a", "AND", "b.c", ")", "OR", "docs.read"], PERM_PIECES);
  const length = intBetween(next, 1, 15);
  return Array.from({ length }, () => pick(next, PERM_PIECES)).join(next() < 0.7 ? " " : "");
}
