/** A time source. Everything that needs "now" takes a Clock so tests can move time by hand. */
export interface Clock {
  /** Current time in Unix milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A duration in milliseconds to the microsecond, as durations are reported (access log, verification events). */
export function toMicroseconds(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
