/**
 * Rate limiting: an exact in-memory sliding window per (workspace, namespace, identifier, duration).
 * The limiter is one instance per process, built by boot.ts and shared by the standalone
 * `ratelimit.*` routes and by key verification.
 */
export { SlidingWindowLimiter, type LimitRequest, type LimitResult, type BatchResult, type WindowRow } from "./sliding-window.ts";
