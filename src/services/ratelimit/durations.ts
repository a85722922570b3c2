/**
 * The window lengths a rate limit may have: 1 second to 30 days, as upstream's ratelimit.limit,
 * everywhere (ad-hoc limits in verifyKey, overrides, key and identity limits). A stored limit from
 * an older version outside them is clamped when used, so no window outlives 60 days.
 */

export const MIN_DURATION_MS = 1_000;
export const MAX_DURATION_MS = 2_592_000_000;

/** The window length a stored limit is applied with: its own, clamped into the bounds. */
export function effectiveDurationMs(durationMs: number): number {
  return Math.min(MAX_DURATION_MS, Math.max(MIN_DURATION_MS, durationMs));
}

/** Whether a stored window has a length the service still uses (others are never consulted again). */
export function isUsableDurationMs(durationMs: number): boolean {
  return durationMs >= MIN_DURATION_MS && durationMs <= MAX_DURATION_MS;
}
