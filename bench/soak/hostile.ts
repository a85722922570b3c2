/**
 * The soak's hostile client: what callers holding least-privilege root keys (bench/soak/hostile-seed.ts)
 * can do to the service's memory and event loop, sent at a fixed rate beside the normal traffic.
 * Open loop, like the normal client (constant-rate.ts), over these operations:
 * - ratelimit.limit and ratelimit.multiLimit (100 checks) with unique 512-character identifiers;
 * - keys.verifyKey with unknown keys;
 * - keys.verifyKey of a real key with 50 ad-hoc limits of unique 255-character names, 30 days long;
 * - keys.createKey with a meta near 1 MB (many small records), each key verified once after it is
 *   made, then, once BIG_META_KEYS exist, verifications of them in turn (every one a cache miss:
 *   the cache holds few of them, and the largest are over its per-entry share and never cached).
 * Beside the open loop, RUNAWAY_IN_FLIGHT analytics queries that only the deadline ends are kept
 * going, closed loop. Every answer is counted by operation and status; expected answers (ratelimited
 * or not-found verifications, 422 past the deadline, 429 over the query share) are not errors, a
 * 5xx or a socket error is, and any other status means the mix does not do what it should.
 */
import { newStats, openLoop, recordAnswer, type OperationStats } from "./constant-rate.ts";
import { HOSTILE_NAMESPACE, type HostileData } from "./hostile-seed.ts";
import { pick } from "./mix.ts";

/** Keys with a big meta made before the client only verifies them (about 1 MB of database each). */
const BIG_META_KEYS = 200;
const RUNAWAY_IN_FLIGHT = 2;
const THIRTY_DAYS_MS = 2_592_000_000;
const RUNAWAY = "SELECT count() AS n FROM key_verifications_v1 AS a, key_verifications_v1 AS b, key_verifications_v1 AS c WHERE a.latency + b.latency + c.latency < 0";
const RUNAWAY_NAME = "analytics.getVerifications, runaway join";

interface HostileRequest {
  name: string;
  path: string;
  rootKey: string;
  body: string;
  expected: readonly number[];
  onAnswer?(status: number, text: string): void;
}

interface HostileOperation {
  /** Out of the sum of all weights. */
  weight: number;
  next(): HostileRequest;
}

export interface HostileResult {
  seconds: number;
  sent: number;
  lateSends: number;
  byOperation: Map<string, OperationStats>;
  /** 5xx answers and socket errors. */
  errors: number;
  /** Answers that are neither expected nor 5xx: the mix did not do what it should. */
  unexpected: number;
}

/** A string of `length` characters unique to `n`: the fill is never a base-36 digit. */
const unique = (prefix: string, n: number, length: number) => `${prefix}${n.toString(36)}-`.padEnd(length, "~");

/** The items of a meta of many small records whose JSON is just under `bytes`. */
function recordItems(bytes: number): string {
  const items: string[] = [];
  let size = 2;
  for (let i = 0; ; i++) {
    const item = JSON.stringify({ id: i, name: `user-${i}`, tags: ["a", "b"], score: i * 1.5, active: i % 2 === 0 });
    if (size + item.length + 1 > bytes) return `[${items.join(",")}]`;
    items.push(item);
    size += item.length + 1;
  }
}

function limitOperations(data: HostileData): HostileOperation[] {
  let n = 0;
  const check = () => ({ namespace: HOSTILE_NAMESPACE, identifier: unique("i", n++, 512), limit: 10, duration: THIRTY_DAYS_MS });
  const request = { rootKey: data.rootKeys.limit, expected: [200] };
  return [
    { weight: 30, next: () => ({ ...request, name: "ratelimit.limit, unique 512-char identifier", path: "/v2/ratelimit.limit", body: JSON.stringify(check()) }) },
    { weight: 5, next: () => ({ ...request, name: "ratelimit.multiLimit, 100 unique identifiers", path: "/v2/ratelimit.multiLimit",
      body: JSON.stringify(Array.from({ length: 100 }, check)) }) },
  ];
}

function verifyOperations(data: HostileData): HostileOperation[] {
  let n = 0;
  let verified = 0;
  const request = { rootKey: data.rootKeys.verify, path: "/v2/keys.verifyKey", expected: [200] };
  const adHoc = () => ({ name: unique("a", n++, 255), limit: 10, duration: THIRTY_DAYS_MS });
  return [
    { weight: 40, next: () => ({ ...request, name: "keys.verifyKey, unknown key", body: JSON.stringify({ key: `hostile_${crypto.randomUUID()}` }) }) },
    { weight: 24, next: () => ({ ...request, name: "keys.verifyKey, 50 ad-hoc 30-day limits",
      body: JSON.stringify({ key: data.keys[verified++ % data.keys.length], ratelimits: Array.from({ length: 50 }, adHoc) }) }) },
  ];
}

/** Creates a big-meta key, then verifies it, and so on until BIG_META_KEYS exist; then verifies them in turn. */
function bigMetaOperation(data: HostileData): HostileOperation {
  // Every other key just under the meta limit (over the cache's per-entry share at the soak's caps), the rest cached.
  const items = [recordItems(1_000_000 - 40), recordItems(800_000 - 40)];
  const created: string[] = [];
  const toVerify: string[] = [];
  let creating = 0;
  let turn = 0;
  const base = { rootKey: data.rootKeys.createAndVerify, expected: [200] };
  const verify = (key: string, name: string): HostileRequest => ({ ...base, name, path: "/v2/keys.verifyKey", body: JSON.stringify({ key }) });
  const next = (): HostileRequest => {
    const fresh = toVerify.shift();
    if (fresh !== undefined) return verify(fresh, "keys.verifyKey, new key with ~1 MB meta");
    if (created.length + creating >= BIG_META_KEYS) return verify(created[turn++ % created.length]!, "keys.verifyKey, ~1 MB meta in turn");
    const n = created.length + creating++;
    return {
      ...base, name: "keys.createKey, ~1 MB meta", path: "/v2/keys.createKey",
      body: `{"apiId":${JSON.stringify(data.apiId)},"meta":{"n":${n},"items":${items[n % 2]}}}`,
      onAnswer(status, text) {
        creating--;
        if (status !== 200) return;
        const key = (JSON.parse(text) as { data: { key: string } }).data.key;
        created.push(key);
        toVerify.push(key);
      },
    };
  };
  return { weight: 1, next };
}

class Tally {
  readonly byOperation = new Map<string, OperationStats>();
  errors = 0;
  unexpected = 0;

  async send(url: string, r: HostileRequest, scheduledAt: number): Promise<Response | undefined> {
    let stats = this.byOperation.get(r.name);
    if (!stats) this.byOperation.set(r.name, (stats = newStats()));
    stats.sent++;
    const sent = { stats, path: r.path, scheduledAt, sentAt: performance.now() };
    let answer: { status: number; text: string } = { status: 0, text: "" };
    try {
      const res = await fetch(`${url}${r.path}`, {
        method: "POST", headers: { authorization: `Bearer ${r.rootKey}`, "content-type": "application/json" }, body: r.body,
      });
      answer = { status: res.status, text: await recordAnswer(sent, res) };
      if (res.status >= 500) this.errors++;
      else if (!r.expected.includes(res.status)) this.unexpected++;
      return res;
    } catch {
      stats.socketErrors++;
      this.errors++;
      return undefined;
    } finally {
      r.onAnswer?.(answer.status, answer.text);
    }
  }
}

/**
 * RUNAWAY_IN_FLIGHT loops of the runaway query until `stop` says so; a 429 waits its Retry-After.
 * The last queries are waited for, not aborted: the server would answer them 500 when it stops.
 */
async function runaways(url: string, rootKey: string, tally: Tally, stop: () => boolean): Promise<void> {
  const request: HostileRequest = { name: RUNAWAY_NAME, path: "/v2/analytics.getVerifications", rootKey, body: JSON.stringify({ query: RUNAWAY }), expected: [422, 429] };
  const loop = async () => {
    while (!stop()) {
      const res = await tally.send(url, request, performance.now());
      if (res === undefined) await Bun.sleep(100);
      else if (res.status === 429) await Bun.sleep(Number(res.headers.get("retry-after") ?? 1) * 1000);
    }
  };
  await Promise.all(Array.from({ length: RUNAWAY_IN_FLIGHT }, loop));
}

/** Sends the hostile mix at `rate` requests/s (plus the runaway queries) for `seconds`. */
export async function hostileClient(url: string, data: HostileData, opts: { rate: number; seconds: number }): Promise<HostileResult> {
  const ops = [...limitOperations(data), ...verifyOperations(data), bigMetaOperation(data)];
  const tally = new Tally();
  let stopped = false;
  const analytics = runaways(url, data.rootKeys.readAnalytics, tally, () => stopped);
  const { sent, lateSends } = await openLoop({ rate: opts.rate, seconds: opts.seconds, maxInFlight: 32 },
    async (scheduledAt) => {
      await tally.send(url, pick(ops, Math.random()).next(), scheduledAt);
    });
  stopped = true;
  await analytics;
  return { seconds: opts.seconds, sent, lateSends, byOperation: tally.byOperation, errors: tally.errors, unexpected: tally.unexpected };
}
