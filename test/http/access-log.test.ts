/**
 * The access log: one JSON line per request with its id, method, route, status and duration, the
 * hot paths included; the level from TOLLGATE_LOG_LEVEL; unknown paths by path without their query;
 * never a root key or a key string.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boot, type Running } from "../../src/boot.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger, type LogLevel } from "../../src/lib/logger.ts";
import { randomKeyPart } from "../../src/lib/ids.ts";

interface Logged {
  running: Running;
  lines: string[];
  rootKey: string;
  post(path: string, body: unknown): Promise<{ status: number; requestId: string | null; body: any }>;
  /** Stops the service once (the access-log hook runs after each response; a stop drains them). */
  stopService(): Promise<void>;
  /** Stops if still running and removes the data dir. */
  cleanup(): Promise<void>;
}

async function bootLogging(level: LogLevel): Promise<Logged> {
  const dataDir = mkdtempSync(join(tmpdir(), "tollgate-access-log-"));
  const rootKey = `tg_test_${randomKeyPart(24)}`;
  const lines: string[] = [];
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: "0", TOLLGATE_ROOT_KEY: rootKey, TOLLGATE_LOG_LEVEL: level });
  const running = await boot({ config, logger: createLogger(level, (l) => lines.push(l)) });
  let stopped: Promise<void> | undefined;
  const stopService = () => (stopped ??= running.stop());
  return {
    running, lines, rootKey,
    async post(path, body) {
      const res = await fetch(running.url + path, {
        method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body),
      });
      return { status: res.status, requestId: res.headers.get("x-request-id"), body: await res.json() };
    },
    stopService,
    async cleanup() {
      await stopService();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The parsed `request` lines; the hook runs just after the response, so a stop makes sure they are all written. */
const requestLines = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");

describe("at debug level", () => {
  let s: Logged;
  let key = "";
  const ids: Record<string, string | null> = {};
  beforeAll(async () => {
    s = await bootLogging("debug");
    const api = await s.post("/v2/apis.createApi", { name: "logged-api" });
    ids.createApi = api.requestId;
    const created = await s.post("/v2/keys.createKey", { apiId: api.body.data.apiId });
    key = created.body.data.key;
    ids.verify = (await s.post("/v2/keys.verifyKey", { key })).requestId;
    ids.invalid = (await s.post("/v2/apis.createApi", { name: 5 })).requestId;
    await fetch(`${s.running.url}/not/a/route?token=${key}`);
    await s.stopService();
  });
  afterAll(() => s.cleanup());

  test("one line per request with request id, method, route, status and duration", () => {
    const byId = new Map(requestLines(s.lines).map((l) => [l.requestId, l]));
    expect(byId.get(ids.createApi)).toMatchObject({ level: "info", method: "POST", route: "/v2/apis.createApi", status: 200 });
    expect(byId.get(ids.invalid)).toMatchObject({ level: "info", route: "/v2/apis.createApi", status: 400 });
    const verify = byId.get(ids.verify);
    expect(verify).toMatchObject({ level: "info", method: "POST", route: "/v2/keys.verifyKey", status: 200 });
    expect(typeof verify?.durationMs).toBe("number");
    expect(requestLines(s.lines)).toHaveLength(5);
  });

  test("an unmatched request is logged by its path without the query string", () => {
    const unmatched = requestLines(s.lines).find((l) => l.route === "unmatched");
    expect(unmatched).toMatchObject({ method: "GET", path: "/not/a/route", status: 404 });
  });

  test("neither the root key nor the key string appears anywhere in the log", () => {
    const all = s.lines.join("\n");
    expect(all).not.toContain(s.rootKey);
    expect(all).not.toContain(key);
    expect(all.toLowerCase()).not.toContain("authorization");
  });
});

describe("at info level", () => {
  test("every request is logged, the hot paths included", async () => {
    const s = await bootLogging("info");
    try {
      const ids = [
        (await s.post("/v2/keys.verifyKey", { key: "some_key_12345" })).requestId,
        (await s.post("/v2/ratelimits.limit", { namespace: "n", identifier: "i", limit: 1, duration: 1000 })).requestId,
        (await s.post("/v2/ratelimit.limit", { namespace: "n", identifier: "i", limit: 1, duration: 1000 })).requestId,
        (await s.post("/v2/apis.createApi", { name: "info-api" })).requestId,
      ];
      await s.stopService();
      const lines = requestLines(s.lines);
      expect(lines.map((l) => [l.requestId, l.route, l.level])).toEqual([
        [ids[0], "/v2/keys.verifyKey", "info"],
        [ids[1], "/v2/ratelimits.limit", "info"],
        [ids[2], "/v2/ratelimit.limit", "info"],
        [ids[3], "/v2/apis.createApi", "info"],
      ]);
    } finally {
      await s.cleanup();
    }
  });
});

describe("at warn level", () => {
  test("answered requests are not logged (only a 5xx would be, at error)", async () => {
    const s = await bootLogging("warn");
    try {
      await s.post("/v2/keys.verifyKey", { key: "some_key_12345" });
      await s.post("/v2/apis.createApi", { name: 5 });
      await s.stopService();
      expect(requestLines(s.lines)).toEqual([]);
    } finally {
      await s.cleanup();
    }
  });
});
