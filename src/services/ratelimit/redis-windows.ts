/**
 * Rate-limit windows held in Redis, shared by every node: the same sliding window as
 * SlidingWindowLimiter (sliding-window.ts), with the same results for the same checks at the same
 * instants. A check or a batch is one Lua script run, atomic in Redis, so concurrent checks from
 * any number of nodes are exact; the script is loaded once (SCRIPT LOAD) and run by its SHA.
 *
 * Time: the caller's Clock gives "now", not Redis's TIME, so that tests move time by hand like the
 * in-memory limiter's, and a node's check is judged at the instant it was asked. Nodes are
 * NTP-synced: a node whose clock is off by a skew sees the window edges moved by that skew, and
 * never gets spent capacity back (a window stored ahead of its clock is kept, as in memory).
 *
 * One hash per counter, {s: windowStartMs, c: count, p: previousCount}, like the in-memory slot.
 * It expires (PEXPIRE, relative, so Redis's own clock does not matter) when the in-memory prune
 * would drop it: two durations after its window started. The windows are held within the same
 * per-workspace and total caps as in memory, by the same rule (redis-window-script.ts).
 * Numbers: every value the script returns is an integer below 2^53 (counts never exceed the limit,
 * times are Unix ms), so the integer replies lose nothing.
 *
 * Unreachable Redis: a check rejects with WindowStoreUnavailable within `timeoutMs`, so the caller
 * can fail open or closed. A check that timed out may still have been charged once Redis answers.
 * Build the client with `enableOfflineQueue: false` (redisWindowClient): otherwise commands queued
 * while Redis is away run after it is back, charging checks whose callers gave up long before; and
 * without the queue, a check while Redis is away fails at once instead of waiting out the timeout.
 * The client's owner connects it before the first check and owns its reconnection (Bun retries on
 * its own a bounded number of times, then waits for connect()): a check never connects, since
 * connect() waits through every retry.
 */
import { RedisClient } from "bun";
import type { Clock } from "../../lib/clock.ts";
import { within } from "../../lib/within.ts";
import { StoreUnreachable } from "../../storage/unreachable.ts";
import type { BatchResult, LimitRequest, LimitResult } from "./sliding-window.ts";
import { WINDOW_SCRIPT } from "./redis-window-script.ts";
import { UNCAPPED, type WindowCaps } from "./workspace-windows.ts";

/** How long a check waits for Redis before it rejects, unless told otherwise. */
export const DEFAULT_WINDOW_STORE_TIMEOUT_MS = 500;
export const DEFAULT_WINDOW_KEY_PREFIX = "tollgate:rl:";

/** Redis did not answer a check in time, or failed it; `cause` says how. Nothing is known about the charge. */
export class WindowStoreUnavailable extends StoreUnreachable {
  override readonly name = "WindowStoreUnavailable";
  constructor(message: string, options?: ErrorOptions) {
    super("Redis", message, options);
  }
}

export interface RedisWindowDeps {
  client: RedisClient;
  clock: Clock;
  /** Prepended to every key: several services (or tests) can share one Redis. */
  keyPrefix?: string;
  /** Bound on one check's wait for Redis, >= 1. */
  timeoutMs?: number;
  /** What the windows may hold in Redis, in bytes as redis-window-script.ts charges them; uncapped by default. */
  caps?: WindowCaps;
}

/** Windows given up to make room for a newer one of the same workspace, and new windows not kept, since start (this node's checks). */
export interface RedisWindowStats {
  evicted: number;
  unkept: number;
}

/** A client as the limiter wants it (not connected yet): a command sent while Redis is away fails instead of waiting in a queue. */
export function redisWindowClient(url: string, timeoutMs = DEFAULT_WINDOW_STORE_TIMEOUT_MS): RedisClient {
  return new RedisClient(url, { enableOfflineQueue: false, connectionTimeout: timeoutMs });
}

/**
 * What connects `client` again after Bun gave up reconnecting on its own: one attempt at a time,
 * shared by whoever asks meanwhile; it never rejects (the next command tells whether it worked).
 */
export function redisReconnector(client: RedisClient): () => Promise<void> {
  let attempt: Promise<void> | undefined;
  return () => {
    if (client.connected) return Promise.resolve();
    attempt ??= client.connect().catch(() => undefined).finally(() => {
      attempt = undefined;
    });
    return attempt;
  };
}

export class RedisWindowLimiter {
  private readonly client: RedisClient;
  private readonly clock: Clock;
  private readonly keyPrefix: string;
  private readonly timeoutMs: number;
  private readonly caps: WindowCaps;
  private readonly counts: RedisWindowStats = { evicted: 0, unkept: 0 };
  /** The script's SHA once SCRIPT LOAD answered; forgotten when it failed, so the next check loads again. */
  private sha: Promise<string> | undefined;

  constructor(deps: RedisWindowDeps) {
    this.client = deps.client;
    this.clock = deps.clock;
    this.keyPrefix = deps.keyPrefix ?? DEFAULT_WINDOW_KEY_PREFIX;
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_WINDOW_STORE_TIMEOUT_MS;
    this.caps = deps.caps ?? UNCAPPED;
  }

  stats(): RedisWindowStats {
    return { ...this.counts };
  }

  /** Checks one limit and, if it passes, charges its cost. Rejects with WindowStoreUnavailable. */
  async check(req: LimitRequest): Promise<LimitResult> {
    const { results } = await this.checkAll([req]);
    return results[0]!;
  }

  /**
   * Checks every limit at one instant; charges all costs only if all pass. A counter listed twice
   * sees the earlier item's cost. In a failed batch, passing items report `remaining` uncharged.
   * Rejects with WindowStoreUnavailable.
   */
  async checkAll(reqs: readonly LimitRequest[]): Promise<BatchResult> {
    if (reqs.length === 0) return { success: true, results: [] };
    // A batch is one workspace's (the verification's key limits, or one namespace's checks).
    const stem = this.stemOf(reqs[0]!.workspace);
    const keys = reqs.map((req) => this.keyOf(req));
    keys.push(`${stem}#i`, `${stem}#b`, `${this.keyPrefix}#total`, `${this.keyPrefix}#expiring`);
    const args = [String(this.clock.now()), capArg(this.caps.workspaceBytes), capArg(this.caps.totalBytes), stem];
    for (const req of reqs) args.push(String(req.limit), String(req.durationMs), String(req.cost));
    const reply = await this.bounded(this.run(keys, args));
    this.counts.evicted += reply[1 + 3 * reqs.length]!;
    this.counts.unkept += reply[2 + 3 * reqs.length]!;
    return {
      success: reply[0] === 1,
      results: reqs.map((req, i) => ({
        success: reply[1 + 3 * i] === 1, limit: req.limit, remaining: reply[2 + 3 * i]!, resetMs: reply[3 + 3 * i]!,
      })),
    };
  }

  /**
   * A SCAN MATCH pattern for every window key of `workspace` under this limiter's prefix (and no
   * other workspace's).
   */
  keyPatternOf(workspace: string): string {
    return `${globEscape(this.keyPrefix)}${workspace.length}{${globEscape(workspace)}}:*`;
  }

  /**
   * The counter's key: the lengths make it unambiguous whatever the strings hold. The workspace is
   * the hash tag, so that a batch (one workspace's windows) stays in one slot of a Redis Cluster.
   */
  private keyOf(req: LimitRequest): string {
    return `${this.stemOf(req.workspace)}:${req.durationMs}:${req.scope.length}:${req.scope}:${req.identifier}`;
  }

  /** The start every key of `workspace` shares; its index and byte count are the stem and `#i` / `#b` (never a counter: those go on with `:`). */
  private stemOf(workspace: string): string {
    return `${this.keyPrefix}${workspace.length}{${workspace}}`;
  }

  private async run(keys: string[], args: string[]): Promise<number[]> {
    const sha = await (this.sha ??= this.load());
    try {
      return await this.client.send("EVALSHA", [sha, String(keys.length), ...keys, ...args]);
    } catch (error) {
      // Redis restarted or its script cache was flushed: EVAL runs the script and caches it again.
      if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      return await this.client.send("EVAL", [WINDOW_SCRIPT, String(keys.length), ...keys, ...args]);
    }
  }

  private load(): Promise<string> {
    return this.client.send("SCRIPT", ["LOAD", WINDOW_SCRIPT]).catch((error: unknown) => {
      this.sha = undefined;
      throw error;
    });
  }

  /** `reply`, or WindowStoreUnavailable once it failed or `timeoutMs` passed. */
  private async bounded<T>(reply: Promise<T>): Promise<T> {
    try {
      return await within(reply, this.timeoutMs, () => {
        throw new WindowStoreUnavailable(`Redis did not answer within ${this.timeoutMs} ms`);
      });
    } catch (error) {
      if (error instanceof WindowStoreUnavailable) throw error;
      throw new WindowStoreUnavailable(`Redis failed the check: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }
}

/** A cap as the script reads it: an integer (the largest exact one when there is none). */
function capArg(bytes: number): string {
  return String(Number.isFinite(bytes) ? Math.floor(bytes) : Number.MAX_SAFE_INTEGER);
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}
