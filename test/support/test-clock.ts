import type { Clock } from "../../src/lib/clock.ts";

/** A Clock that only moves when a test moves it, so time-based behaviour is tested without sleeps. */
export class TestClock implements Clock {
  private currentMs: number;

  constructor(startMs = 1_700_000_000_000) {
    this.currentMs = startMs;
  }

  now(): number {
    return this.currentMs;
  }

  /** Jump to an absolute Unix ms (backwards too, to test clock steps). */
  set(ms: number): void {
    this.currentMs = ms;
  }

  advance(ms: number): void {
    this.currentMs += ms;
  }
}
