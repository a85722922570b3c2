/**
 * The analytics page's pure parts: its table list equals the server's public tables, an error's
 * position is found in the query from the parser's own 400 detail, and result rows shape into series.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PUBLIC_TABLES } from "../../src/services/analytics/query/tables.ts";
import { ANALYTICS_TABLES, errorPosition, resultChart } from "../../src/console/app/sql-box.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { TEST_ACTOR } from "../support/contract.ts";

test("the console's tables and columns are the server's public ones, in its order", () => {
  const server = [...PUBLIC_TABLES.values()].map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name) }));
  expect(ANALYTICS_TABLES).toEqual(server);
});

describe("errorPosition, on the server's 400 details", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  });
  afterAll(() => h?.stop());

  const detailOf = async (query: string) => {
    const res = await h.post("/v2/analytics.getVerifications", { query });
    expect(res.status).toBe(400);
    return (res.body.error as { detail: string }).detail;
  };

  test("a line and column in the detail: the offset of the token it names", async () => {
    const query = "SELECT time\nFROM key_verifications_v1\nGROUP time";
    const at = errorPosition(query, await detailOf(query));
    expect(at).toEqual({ line: 3, column: 1, offset: 38 });
    expect(query.slice(at!.offset, at!.offset + 5)).toBe("GROUP");
  });

  test("a position past the token it names (after a trailing comma): back at that token", async () => {
    const query = "SELECT time,\n  FROM key_verifications_v1";
    const detail = await detailOf(query);
    expect(detail).toContain("found: FROM at Line: 2, Column: 8");
    const at = errorPosition(query, detail);
    expect(at).toEqual({ line: 2, column: 3, offset: 15 });
    expect(query.slice(at!.offset, at!.offset + 4)).toBe("FROM");
  });

  test("an unexpected end: the end of the query", async () => {
    const query = "SELECT time FROM key_verifications_v1 WHERE\n";
    expect(errorPosition(query, await detailOf(query))).toEqual({ line: 1, column: 44, offset: 43 });
  });

  test("a detail without a position: none", async () => {
    const query = "SELECT nope FROM key_verifications_v1";
    expect(errorPosition(query, await detailOf(query))).toBeUndefined();
  });
});

describe("resultChart", () => {
  test("a time and one number: one series named by the column", () => {
    expect(resultChart([{ time: 2, total: 5 }, { time: 1, total: 3 }])).toEqual({ timesMs: [1, 2], series: [{ label: "total", values: [3, 5] }] });
  });

  test("a text column splits the series by its values, gaps are null", () => {
    const chart = resultChart([{ time: 1, outcome: "VALID", total: 3 }, { time: 2, outcome: "VALID", total: 1 }, { time: 2, outcome: "DISABLED", total: 2 }]);
    expect(chart).toEqual({ timesMs: [1, 2], series: [{ label: "VALID", values: [3, 1] }, { label: "DISABLED", values: [null, 2] }] });
  });

  test("no time column, or nothing numeric: no chart", () => {
    expect(resultChart([{ key_id: "k", total: 1 }])).toBeUndefined();
    expect(resultChart([{ time: 1, outcome: "VALID" }])).toBeUndefined();
    expect(resultChart([])).toBeUndefined();
  });
});
