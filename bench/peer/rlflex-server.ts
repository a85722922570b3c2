/**
 * The peer users pick today for rate limiting: `rate-limiter-flexible` on Redis (through ioredis)
 * behind a bare `Bun.serve`, answering `POST /v2/ratelimits.limit` with tollgate's request and
 * response shapes. One limiter per (namespace, limit, duration), made on first use and kept.
 * rate-limiter-flexible counts a fixed window of whole seconds per key in Redis (an atomic Lua
 * script per request); tollgate keeps a sliding window in memory and persists it in batches.
 *
 * Env: PEER_REDIS_URL (redis://127.0.0.1:PORT), PEER_TOKEN (the bearer token callers must send).
 * Prints one JSON line with its `url` once it listens.
 */
import Redis from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";

interface LimitRequest {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost: number;
}

const redis = new Redis(process.env.PEER_REDIS_URL ?? "redis://127.0.0.1:6379", { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
const expectedAuth = `Bearer ${process.env.PEER_TOKEN ?? ""}`;
const limiters = new Map<string, RateLimiterRedis>();

function limiterFor(req: LimitRequest): RateLimiterRedis {
  const name = `${req.namespace}:${req.limit}:${req.duration}`;
  let limiter = limiters.get(name);
  if (!limiter) {
    limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: name, points: req.limit, duration: req.duration / 1000 });
    limiters.set(name, limiter);
  }
  return limiter;
}

const isInt = (v: unknown, min: number, max: number): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const isName = (v: unknown): v is string => typeof v === "string" && v.length >= 1 && v.length <= 255;

/** The body if it is a valid limit request, else what is wrong with it. */
function parseLimit(body: unknown): LimitRequest | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the body must be a JSON object";
  const b = body as Record<string, unknown>;
  if (!isName(b.namespace)) return "namespace must be a string of 1 to 255 characters";
  if (!isName(b.identifier)) return "identifier must be a string of 1 to 255 characters";
  if (!isInt(b.limit, 1, 1_000_000_000)) return "limit must be an integer from 1";
  // rate-limiter-flexible keeps whole seconds; under one second a key would never expire.
  if (!isInt(b.duration, 1000, 2_592_000_000)) return "duration must be an integer of milliseconds from 1000";
  const cost = b.cost ?? 1;
  if (!isInt(cost, 0, 1_000_000_000)) return "cost must be a non-negative integer";
  return { namespace: b.namespace, identifier: b.identifier, limit: b.limit, duration: b.duration, cost };
}

function envelope(status: number, payload: Record<string, unknown>): Response {
  return Response.json({ meta: { requestId: `req_${Bun.randomUUIDv7("base64url")}` }, ...payload }, { status });
}

const problem = (status: number, title: string, detail: string) => envelope(status, { error: { title, detail, status } });

async function limit(req: LimitRequest): Promise<Response> {
  try {
    const res = await limiterFor(req).consume(req.identifier, req.cost);
    return envelope(200, { data: { success: true, limit: req.limit, remaining: res.remainingPoints, reset: Date.now() + res.msBeforeNext } });
  } catch (rejection) {
    // rate-limiter-flexible rejects with a RateLimiterRes when the limit is reached, with an Error when Redis fails.
    if (!(rejection instanceof RateLimiterRes)) return problem(500, "Internal Server Error", String(rejection));
    return envelope(200, { data: { success: false, limit: req.limit, remaining: 0, reset: Date.now() + rejection.msBeforeNext } });
  }
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (request.method !== "POST" || path !== "/v2/ratelimits.limit") return problem(404, "Not Found", "no such route");
    if (request.headers.get("authorization") !== expectedAuth) return problem(401, "Unauthorized", "a valid root key is required");
    const body = await request.json().catch(() => undefined);
    const parsed = parseLimit(body);
    return typeof parsed === "string" ? problem(400, "Bad Request", parsed) : limit(parsed);
  },
});

process.on("SIGTERM", () => {
  server.stop(true);
  redis.disconnect();
  process.exit(0);
});
console.log(JSON.stringify({ msg: "rate-limiter-flexible peer listening", url: `http://127.0.0.1:${server.port}` }));
