/**
 * What a record store throws when a write breaks a unique index, the same whatever the backend, so
 * that a service answers its 409 without reading a dialect's messages.
 */
export class DuplicateRecord extends Error {
  constructor(options?: ErrorOptions) {
    super("a unique index already holds this value", options);
    this.name = "DuplicateRecord";
  }
}

/**
 * Thrown by a unit of work that found its reads overtaken by a unit committed since (it found a
 * record missing, then could not insert it because another unit just had): the backend runs the
 * unit again, and the new run reads what was committed. The embedded backend runs one unit at a
 * time, so there it never happens.
 */
export class LostRace extends Error {
  constructor(what: string, options?: ErrorOptions) {
    super(`another write committed first: ${what}`, options);
    this.name = "LostRace";
  }
}

/** Whether `error` or any error in its chain of causes passes `test` (drizzle wraps the driver's errors). */
export function inCauses(error: unknown, test: (cause: { code?: unknown; errno?: unknown }) => boolean): boolean {
  for (let e: unknown = error; typeof e === "object" && e !== null; e = (e as { cause?: unknown }).cause) {
    if (test(e as { code?: unknown; errno?: unknown })) return true;
  }
  return false;
}

/** Runs `write`; SQLite's refusal of a duplicate in a unique index becomes DuplicateRecord. */
export function rethrowDuplicate<T>(write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (inCauses(error, (e) => e.code === "SQLITE_CONSTRAINT_UNIQUE")) throw new DuplicateRecord({ cause: error });
    throw error;
  }
}
