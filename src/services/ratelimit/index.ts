/**
 * Rate limiting: an exact in-memory sliding window per (workspace, namespace, identifier, duration).
 * The limiter is one instance per process, built by boot.ts and shared by the standalone
 * `ratelimit.*` routes (RatelimitService) and by key verification. RatelimitStore appends its
 * changed windows to a log in SQLite and replays it at start, so a restart forgets no count.
 *
 * Bounds: window lengths are 1 s to 30 days (durations.ts); the live windows are held within a
 * memory cap per workspace and in total, a workspace giving up only its own least recently used
 * windows (window-slots.ts), and a restart brings back at most the caps. A namespace holds at most
 * a capped number of wildcard overrides, since every check on it tries each (service.ts). Cached
 * namespaces and their overrides are held within a byte cap per workspace and in total
 * (namespace-cache.ts); a namespace's overrides beyond its share stay in the records (override-loader.ts).
 *
 * For several nodes, RedisWindowLimiter (redis-windows.ts) holds the same windows in Redis, exact
 * across nodes; RatelimitService then checks through it and reads its namespaces and overrides from
 * the cluster's records (checks.ts, check-reads.ts). Nothing builds it that way yet.
 */
export {
  SlidingWindowLimiter, type LimitRequest, type LimitResult, type BatchResult, type WindowRow, type WindowStats,
} from "./sliding-window.ts";
export {
  RedisWindowLimiter, WindowStoreUnavailable, redisWindowClient, redisReconnector, DEFAULT_WINDOW_STORE_TIMEOUT_MS, DEFAULT_WINDOW_KEY_PREFIX, type RedisWindowDeps,
} from "./redis-windows.ts";
export { type WindowCaps } from "./workspace-windows.ts";
export { MIN_DURATION_MS, MAX_DURATION_MS, effectiveDurationMs } from "./durations.ts";
export { RatelimitService, DEFAULT_OVERRIDE_PAGE, DEFAULT_NAMESPACE_CACHE_CAPS, DEFAULT_WILDCARD_OVERRIDES, type RatelimitDeps } from "./service.ts";
export type { RatelimitDecisionRecorder, LimitInput, LimitOutcome, MultiLimitCheck, OverrideView, OverridePage } from "./views.ts";
export { type NamespacePage, type ListNamespacesInput } from "./namespace-list.ts";
export { RatelimitStore } from "./store.ts";
export { tolerateUnreachable, type UnreachablePolicy, type WindowLimiter } from "./window-limiter.ts";
export { decodeChunk } from "./window-log.ts";
export { OverrideIndex, matchesPattern, type OverrideRecord } from "./overrides.ts";
