/**
 * The commit the executable was built from. build.ts defines TOLLGATE_BUILD_COMMIT at compile time
 * (a constant in the binary, not the environment, so it cannot drift from the code); `bun run`
 * from a checkout has none and says `unknown`.
 */
declare const TOLLGATE_BUILD_COMMIT: string | undefined;

export const BUILD_COMMIT: string = typeof TOLLGATE_BUILD_COMMIT === "string" ? TOLLGATE_BUILD_COMMIT : "unknown";
