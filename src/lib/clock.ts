/** A time source. Everything that needs "now" takes a Clock so tests can move time by hand. */
export interface Clock {
  /** Current time in Unix milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
