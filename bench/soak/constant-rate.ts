/**
 * A constant-rate (open-loop) client: request n goes out at start + n / rate whatever the answers
 * before it did, and its latency counts from that scheduled moment, so a server that falls behind
 * shows it in the latency instead of quietly getting fewer requests (what a closed-loop tool like
 * wrk, or hey's per-worker -q, would do). Latencies go into a log histogram (1% buckets) per
 * operation. At most `maxInFlight` requests are open; past that, sends wait and their lateness counts.
 */
import { pick, type Operation } from "./mix.ts";

export class Histogram {
  private readonly counts = new Map<number, number>();
  total = 0;

  add(ms: number): void {
    const bucket = Math.floor(Math.log(Math.max(ms, 0.001) * 1000) / Math.log(1.01));
    this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + 1);
    this.total++;
  }

  merge(other: Histogram): void {
    for (const [bucket, n] of other.counts) this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + n);
    this.total += other.total;
  }

  /** The `q` quantile in ms (to within 1%). */
  quantile(q: number): number {
    let seen = 0;
    for (const bucket of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(bucket)!;
      if (seen >= q * this.total) return 1.01 ** (bucket + 0.5) / 1000;
    }
    return Number.NaN;
  }
}

export interface OperationStats {
  sent: number;
  statuses: Map<number, number>;
  socketErrors: number;
  /** Answers that were 200 but a denial: a verification not valid, a rate limit not passed. */
  denials: number;
  latency: Histogram;
}

export interface ConstantRateResult {
  sent: number;
  seconds: number;
  byOperation: Map<string, OperationStats>;
  /** Sends more than 10 ms after their scheduled moment (the client or the in-flight cap held them). */
  lateSends: number;
  /** Latency of every answer from the moment it was actually sent (what the server alone took, plus the client's own delays). */
  fromSend: Histogram;
  /** The client's own CPU time per request, µs (it shares the machine with the server). */
  clientCpuUsPerRequest: number;
}

/** An empty record for one operation. */
export function newStats(): OperationStats {
  return { sent: 0, statuses: new Map(), socketErrors: 0, denials: 0, latency: new Histogram() };
}

/** True when a 200 answer denied: verification `valid: false`, a rate limit `success: false`, a multiLimit `passed: false`. */
function isDenial(path: string, body: string): boolean {
  if (path.endsWith("keys.verifyKey")) return !body.includes('"valid":true');
  if (/ratelimits?\.limit$/.test(path)) return !body.includes('"success":true');
  if (path.endsWith("ratelimit.multiLimit")) return !body.includes('"passed":true');
  return false;
}

export interface Sent {
  stats: OperationStats;
  path: string;
  /** When the request was due: its latency counts from here. */
  scheduledAt: number;
  sentAt: number;
}

/** Records an answer (status, latency, denial) into `sent.stats` and `fromSend`; returns its text. */
export async function recordAnswer(sent: Sent, res: Response, fromSend?: Histogram): Promise<string> {
  const text = await res.text();
  const answeredAt = performance.now();
  sent.stats.latency.add(answeredAt - sent.scheduledAt);
  fromSend?.add(answeredAt - sent.sentAt);
  sent.stats.statuses.set(res.status, (sent.stats.statuses.get(res.status) ?? 0) + 1);
  if (res.status === 200 && isDenial(sent.path, text)) sent.stats.denials++;
  return text;
}

/**
 * The open loop itself: calls `fire(scheduledAt)` for request n at start + n / rate, at most
 * `maxInFlight` of its promises open at once, until `seconds` have passed; then waits for the last.
 */
export async function openLoop(opts: { rate: number; seconds: number; maxInFlight?: number }, fire: (scheduledAt: number) => Promise<void>): Promise<{ sent: number; lateSends: number }> {
  const maxInFlight = opts.maxInFlight ?? 64;
  const open = new Set<Promise<void>>();
  let sent = 0;
  let lateSends = 0;
  const start = performance.now();
  const end = start + opts.seconds * 1000;
  for (let now = start; now < end; now = performance.now()) {
    const due = Math.floor(((now - start) * opts.rate) / 1000);
    while (sent < due && open.size < maxInFlight) {
      const scheduled = start + (sent * 1000) / opts.rate;
      if (now - scheduled > 10) lateSends++;
      const request: Promise<void> = fire(scheduled).finally(() => open.delete(request));
      open.add(request);
      sent++;
    }
    await Bun.sleep(1);
  }
  await Promise.all(open);
  return { sent, lateSends };
}

export async function constantRate(url: string, rootKey: string, mix: Operation[], opts: { rate: number; seconds: number; maxInFlight?: number }): Promise<ConstantRateResult> {
  const headers = { authorization: `Bearer ${rootKey}`, "content-type": "application/json" };
  const byOperation = new Map<string, OperationStats>(mix.map((op) => [op.name, newStats()]));
  const fromSend = new Histogram();
  const cpu0 = process.cpuUsage();

  const fire = (scheduledAt: number): Promise<void> => {
    const op = pick(mix, Math.random());
    const stats = byOperation.get(op.name)!;
    stats.sent++;
    const body = op.bodies[Math.floor(Math.random() * op.bodies.length)]!;
    const sent = { stats, path: op.path, scheduledAt, sentAt: performance.now() };
    return fetch(`${url}${op.path}`, { method: "POST", headers, body })
      .then(async (res) => {
        await recordAnswer(sent, res, fromSend);
      })
      // A refused or broken connection, or a body cut short.
      .catch(() => {
        stats.socketErrors++;
      });
  };

  const { sent, lateSends } = await openLoop(opts, fire);
  const cpu = process.cpuUsage(cpu0);
  return { sent, seconds: opts.seconds, byOperation, lateSends, fromSend, clientCpuUsPerRequest: (cpu.user + cpu.system) / sent };
}
