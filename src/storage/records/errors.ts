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
