/**
 * A small seeded PRNG (mulberry32) and helpers, so that a randomised test reproduces from its
 * printed seed.
 */
export interface Rng {
  /** A float in [0, 1). */
  (): number;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max]. */
export function intBetween(next: Rng, min: number, max: number): number {
  return min + Math.floor(next() * (max - min + 1));
}

/** One element of a non-empty list. */
export function pick<T>(next: Rng, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

/** The seed from the environment variable `name` when set, else a fresh one; print it so a failure reproduces. */
export function seedFrom(name: string, env: Record<string, string | undefined>): number {
  const given = env[name];
  if (given !== undefined && given !== "") {
    const seed = Number(given);
    if (!Number.isInteger(seed)) throw new Error(`${name} must be an integer, got '${given}'`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
