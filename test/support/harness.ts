/**
 * startHarness(): the real boot() on port 0 against a fresh temporary data dir, with a TestClock.
 * Every test file (or test) gets its own instance; nothing is shared between them. With
 * TOLLGATE_TEST_BACKEND=cluster it boots a cluster node on a fresh PostgreSQL database and a Redis
 * of its own (cluster-backend.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boot, type EmbeddedRunning, type Running } from "../../src/boot.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger, resolveLogFormat, silentLogger, type Logger } from "../../src/lib/logger.ts";
import { randomKeyPart } from "../../src/lib/ids.ts";
import { TestClock } from "./test-clock.ts";
import { clusterServers, TEST_BACKEND, type ClusterServers } from "./cluster-backend.ts";
import { postgresTables, sqliteTables, type RecordTables } from "./records-tables.ts";

export interface Harness {
  url: string;
  /** The bootstrap root key: every permission in workspace `default`. */
  rootKey: string;
  clock: TestClock;
  dataDir: string;
  running: Running;
  /**
   * The embedded mode's running service with its databases (tollgate.db, analytics.db); throws on
   * a cluster node, which has none (a test that reads them is `embeddedOnly`).
   */
  readonly embedded: EmbeddedRunning;
  /** The records' tables (tollgate.db, or the cluster's PostgreSQL database), to inspect or arrange rows. */
  records: RecordTables;
  /** POSTs JSON to a path with `Authorization: Bearer <key>` (the bootstrap key unless given; null sends none). */
  post(path: string, body: unknown, opts?: { key?: string | null; headers?: Record<string, string> }): Promise<ApiResponse>;
  /** A new root key in `workspace` (default `default`) holding exactly `permissions`. */
  rootKeyWith(permissions: string[], workspace?: string): Promise<string>;
  /** Stops the service gracefully and boots it again on the same data dir (a new port; same clock). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** `running` as the embedded mode's, or an error that says the test needs it. */
export function embeddedOf(running: Running): EmbeddedRunning {
  if (running.mode !== "embedded") throw new Error("this test reads the embedded mode's SQLite databases, which a cluster node does not have: mark it embeddedOnly");
  return running;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read whatever the envelope holds; the contract tests assert its shape.
  body: any;
}

/**
 * `logLines` collects every log line (info and above, in TOLLGATE_LOG_FORMAT) instead of dropping
 * them. `servers` boots a cluster node on those servers, whatever TOLLGATE_TEST_BACKEND says; the
 * harness stops them with itself.
 */
export async function startHarness(opts: { env?: Record<string, string>; startMs?: number; logLines?: string[]; servers?: ClusterServers } = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), "tollgate-test-"));
  const lines = opts.logLines;
  const rootKey = `tg_test_${randomKeyPart(24)}`;
  const servers: ClusterServers | undefined = opts.servers ?? (TEST_BACKEND === "cluster" ? await clusterServers() : undefined);
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: "0", TOLLGATE_ROOT_KEY: rootKey, ...servers?.env, ...opts.env });
  const logger: Logger = lines ? createLogger("info", (line) => lines.push(line), resolveLogFormat(config.logFormat, false)) : silentLogger;
  const clock = new TestClock(opts.startMs);
  // A node never initialises its cluster: the first harness on these servers does, as `tollgate cluster-init` would.
  await servers?.initialise({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey, ...opts.env }, clock);
  const actor = { type: "cli" as const, id: "test" };
  const h: Harness = {
    url: "",
    rootKey,
    clock,
    dataDir,
    running: await boot({ config, logger, clock }),
    get embedded() { return embeddedOf(h.running); },
    records: servers ? postgresTables(servers.env.TOLLGATE_DATABASE_URL!) : sqliteTables(() => h.embedded.storage.sqlite),
    async post(path, body, o = {}) {
      const key = o.key === undefined ? rootKey : o.key;
      const res = await fetch(h.url + path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key !== null ? { authorization: `Bearer ${key}` } : {}), ...o.headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Non-JSON bodies are returned as text so the test can show them.
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async rootKeyWith(permissions, workspace = "default") {
      return (await h.running.services.workspaces.createRootKey({ workspace, name: "test", permissions }, actor)).key;
    },
    async restart() {
      await h.running.stop();
      h.running = await boot({ config, logger, clock });
      h.url = h.running.url;
    },
    async stop() {
      await h.running.stop();
      await h.records.close();
      await servers?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  h.url = h.running.url;
  return h;
}
