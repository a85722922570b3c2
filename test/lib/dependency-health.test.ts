/**
 * DependencyHealth: one warning when a server's outage starts and one when it ends, however many
 * requests fail meanwhile; counters of requests failed open and closed; unknown names ignored.
 */
import { expect, test } from "bun:test";
import { DependencyHealth } from "../../src/lib/dependency-health.ts";
import { createLogger } from "../../src/lib/logger.ts";

function withLog(): { health: DependencyHealth; lines: Array<{ level: string; msg: string; dependency?: string }> } {
  const lines: Array<{ level: string; msg: string; dependency?: string }> = [];
  const health = new DependencyHealth(createLogger("debug", (line) => lines.push(JSON.parse(line))), ["PostgreSQL", "Redis"]);
  return { health, lines };
}

test("a hundred failed requests and probes during one outage: one warning when it starts, one when it ends", () => {
  const { health, lines } = withLog();
  for (let i = 0; i < 100; i++) health.failed("Redis", i % 2 === 0 ? "open" : "closed", "ERR_REDIS_CONNECTION_CLOSED");
  health.down("Redis", "Redis did not answer within 1000 ms.");
  health.up("Redis");
  health.up("Redis");
  expect(lines.map((l) => [l.level, l.msg, l.dependency])).toEqual([["warn", "Redis is unreachable", "Redis"], ["warn", "Redis is reachable again", "Redis"]]);
  expect(health.states()).toEqual([
    { name: "PostgreSQL", up: true, failedOpen: 0, failedClosed: 0 },
    { name: "Redis", up: true, failedOpen: 50, failedClosed: 50 },
  ]);
});

test("a server not watched is ignored; one that never went down logs nothing when it answers", () => {
  const { health, lines } = withLog();
  health.failed("ClickHouse", "closed", "x");
  health.up("PostgreSQL");
  expect(lines).toEqual([]);
  expect(health.states().every((s) => s.up && s.failedClosed === 0)).toBe(true);
});
