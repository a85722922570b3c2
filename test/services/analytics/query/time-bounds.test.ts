/** The bounds a WHERE clause sets on a source's `time` (time-bounds.ts): only ever implied by the WHERE. */
import { beforeAll, describe, expect, test } from "bun:test";
import { guardQuery } from "../../../../src/services/analytics/query/guard-query.ts";
import type { Select } from "../../../../src/services/analytics/query/ir.ts";
import { initSqlParser, parseSingleSelect } from "../../../../src/services/analytics/query/parse.ts";
import { timeBounds } from "../../../../src/services/analytics/query/time-bounds.ts";

beforeAll(async () => { await initSqlParser(); });

const NOW = Date.UTC(2026, 5, 15, 12);
const DAY = 86_400_000;

/** The bounds the WHERE of `SELECT ... FROM <from> WHERE <where>` sets on source `alias`. */
function bounds(where: string, opts: { from?: string; alias?: string } = {}) {
  const query = guardQuery(parseSingleSelect(`SELECT count() FROM ${opts.from ?? "key_verifications_v1"} WHERE ${where}`));
  const select = (query.body as { select: Select }).select;
  return timeBounds(select.where, opts.alias ?? "key_verifications_v1", select.from.length === 1, NOW);
}

describe("bounds set", () => {
  test.each([
    ["time > 100", { lowest: 100 }],
    ["time >= 100", { lowest: 100 }],
    ["time < 100", { highest: 100 }],
    ["time <= 100", { highest: 100 }],
    ["time = 100", { lowest: 100, highest: 100 }],
    ["100 < time", { lowest: 100 }],
    ["100 >= time", { highest: 100 }],
    ["time BETWEEN 100 AND 200", { lowest: 100, highest: 200 }],
    ["time > now() - INTERVAL 7 DAY", { lowest: NOW - 7 * DAY }],
    ["time >= today() AND time < today() + INTERVAL 1 DAY", { lowest: Math.floor(NOW / DAY) * DAY, highest: Math.floor(NOW / DAY) * DAY + DAY }],
    ["time > 100 AND outcome = 'VALID' AND (time < 500 AND key_id <> 'k')", { lowest: 100, highest: 500 }],
    ["time > 100 AND time > 300 AND time < 900 AND time < 700", { lowest: 300, highest: 700 }],
    ["TIME > 100", { lowest: 100 }],
  ])("%s", (where, expected) => {
    expect(bounds(where)).toEqual(expected);
  });

  test("a qualified `time` bounds its own source, also among several", () => {
    expect(bounds("r.time > 100", { from: "key_verifications_v1 AS r", alias: "r" })).toEqual({ lowest: 100 });
    const join = { from: "key_verifications_v1 AS r JOIN key_verifications_per_day_v1 AS d ON r.key_id = d.key_id" };
    expect(bounds("r.time > 100 AND d.time < 50", { ...join, alias: "r" })).toEqual({ lowest: 100 });
    expect(bounds("r.time > 100 AND d.time < 50", { ...join, alias: "d" })).toEqual({ highest: 50 });
  });
});

describe("no bound", () => {
  test.each([
    "time > 100 OR outcome = 'VALID'",
    "NOT (time > 100)",
    "time NOT BETWEEN 100 AND 200",
    "time <> 100",
    "time > '100'",
    "time > spent_credits",
    "time > now() - INTERVAL 1 MONTH",
    "time > toStartOfDay(now())",
    "time IN (100, 200)",
    "other.time > 100",
    "time > (SELECT max(time) FROM key_verifications_per_day_v1)",
  ])("%s", (where) => {
    expect(bounds(where)).toEqual({});
  });

  test("an unqualified `time` among several sources bounds none of them", () => {
    const from = "key_verifications_v1 AS r, key_verifications_per_day_v1 AS d";
    expect(bounds("r.key_id = d.key_id AND time > 100", { from, alias: "r" })).toEqual({});
  });
});
