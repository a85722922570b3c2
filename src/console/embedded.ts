/**
 * The console bundle embedded in the executable. Under `bun run` there is none (undefined) and the
 * console is bundled from its sources; build.ts replaces this module, when compiling, with one that
 * imports each pre-built file `with { type: "file" }` so it is stored inside the executable.
 */
export const EMBEDDED_CONSOLE: ReadonlyArray<{ name: string; contentType: string; path: string }> | undefined = undefined;
