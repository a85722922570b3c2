/**
 * The graceful stop of the real `tollgate serve` (a child process), part by part: on SIGTERM or
 * SIGINT it stops accepting connections, answers the request in flight, flushes rate-limit windows,
 * credit spends and analytics events (their periodic flushes set far off, so only the stop can have
 * written them), folds the WALs into tollgate.db and analytics.db and exits 0; a client that never finishes its
 * request is cut off after TOLLGATE_SHUTDOWN_TIMEOUT_MS. A request is known to be in flight when
 * the server has answered its `Expect: 100-continue`: it has been read up to its body.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { startServe, tempDataDir } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";
import { loggedCount } from "../support/ratelimit-log.ts";

const ROOT_KEY = "tg_test_stop_root_key_0123456789";
const DAY_MS = 86_400_000;

const t = perTest();

/** A raw HTTP/1.1 connection, to hold a request half-sent. */
class RawClient {
  private received = "";
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => this.update(() => (this.received += chunk)));
    socket.on("close", () => this.update(() => (this.closed = true)));
    socket.on("error", () => {});
  }

  static open(url: string): Promise<RawClient> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawClient(socket)));
      socket.once("error", reject);
    });
  }

  private update(change: () => void): void {
    change();
    for (const w of this.waiters.splice(0)) w();
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Resolves once `done` holds for what was received (or the connection closed), within 10 s. */
  async until(done: (received: string) => boolean): Promise<string> {
    const deadline = Date.now() + 10_000;
    while (!done(this.received) && !this.closed) {
      if (Date.now() > deadline) throw new Error(`nothing matched within 10 s; received: ${this.received}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, deadline - Date.now());
      });
    }
    return this.received;
  }

  end(): void {
    this.socket.destroy();
  }
}

/** Sends a createApi request up to its body and waits for `100 Continue`: it is then in flight. */
async function halfSentCreateApi(url: string, name: string): Promise<{ client: RawClient; body: string }> {
  const body = JSON.stringify({ name });
  const client = await RawClient.open(url);
  client.write(`POST /v2/apis.createApi HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ROOT_KEY}\r\n`
    + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`);
  await client.until((r) => r.includes("100 Continue"));
  return { client, body };
}

/** Resolves once a new connection to `url` is refused; fails if that does not happen within 10 s. */
async function refusesConnections(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (await RawClient.open(url).then((c) => (c.end(), true), () => false)) {
    if (Date.now() > deadline) throw new Error("new connections were still accepted 10 s after the stop began");
  }
}

describe("SIGTERM with a request in flight", () => {
  test("new connections are refused, the request is answered and its write kept, exit 0", async () => {
    t.data = tempDataDir();
    t.served = await startServe({ dataDir: t.data.dir, env: { TOLLGATE_ROOT_KEY: ROOT_KEY } });
    const { url } = t.served;
    const { client, body } = await halfSentCreateApi(url, "in-flight-api");

    t.served.signal("SIGTERM");
    await refusesConnections(url);

    client.write(body);
    const response = await client.until((r) => /\r\n\r\n\{.*\}$/s.test(r));
    expect(response).toContain("HTTP/1.1 200 OK");
    const apiId = (JSON.parse(response.slice(response.lastIndexOf("\r\n\r\n") + 4)) as { data: { apiId: string } }).data.apiId;
    client.end();
    expect(await t.served.exitCode()).toBe(0);

    t.served = await startServe({ dataDir: t.data.dir, env: { TOLLGATE_ROOT_KEY: ROOT_KEY } });
    expect((await t.served.post("/v2/apis.getApi", { apiId }, ROOT_KEY)).status).toBe(200);
  });

  test("a client that never sends its body is cut off after TOLLGATE_SHUTDOWN_TIMEOUT_MS; the stop still ends with 0", async () => {
    t.data = tempDataDir();
    t.served = await startServe({ dataDir: t.data.dir, env: { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_SHUTDOWN_TIMEOUT_MS: "200" } });
    const { client } = await halfSentCreateApi(t.served.url, "never-finished");
    t.served.signal("SIGTERM");
    expect(await t.served.exitCode()).toBe(0);
    await client.until(() => false);
    expect(client.closed).toBe(true);
    expect(t.served.stderr()).toContain("requests still in flight at the shutdown timeout");
    expect(t.served.stderr()).toContain('"msg":"stopped"');
  });
});

describe("SIGINT", () => {
  test("flushes rate-limit windows, credit spends and analytics events, and leaves tollgate.db and analytics.db complete without their WALs", async () => {
    t.data = tempDataDir();
    const env = { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_RATELIMIT_FLUSH_MS: "60000", TOLLGATE_ANALYTICS_FLUSH_MS: "60000" };
    t.served = await startServe({ dataDir: t.data.dir, env });
    const api = await t.served.post("/v2/apis.createApi", { name: "sigint-api" }, ROOT_KEY);
    const key = await t.served.post("/v2/keys.createKey", { apiId: api.body.data.apiId, credits: { remaining: 10 } }, ROOT_KEY);
    for (let i = 0; i < 3; i++) expect((await t.served.post("/v2/keys.verifyKey", { key: key.body.data.key }, ROOT_KEY)).body.data.valid).toBe(true);
    const limit = { namespace: "sigint", identifier: "user_1", limit: 5, duration: DAY_MS };
    for (let i = 0; i < 2; i++) expect((await t.served.post("/v2/ratelimits.limit", limit, ROOT_KEY)).body.data.success).toBe(true);

    t.served.signal("SIGINT");
    expect(await t.served.exitCode()).toBe(0);
    expect(t.served.stderr()).toContain('"signal":"SIGINT"');

    // The two database files alone, as an operator would copy them, hold everything.
    const alone = join(t.data.parent, "alone");
    mkdirSync(alone);
    for (const file of ["tollgate.db", "analytics.db"]) {
      const wal = join(t.data.dir, `${file}-wal`);
      expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
      copyFileSync(join(t.data.dir, file), join(alone, file));
    }
    const db = new Database(join(alone, "tollgate.db"), { readonly: true });
    const analytics = new Database(join(alone, "analytics.db"), { readonly: true });
    try {
      const keyId = key.body.data.keyId;
      expect(db.query("SELECT remaining FROM keys WHERE id = ?").get(keyId)).toEqual({ remaining: 7 });
      expect(analytics.query("SELECT count(*) AS n FROM verification_events WHERE key_id = ? AND outcome = 'VALID'").get(keyId)).toEqual({ n: 3 });
      expect(loggedCount(db, "user_1")).toBe(2);
    } finally {
      db.close();
      analytics.close();
    }
  });
});
