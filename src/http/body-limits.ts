/**
 * Each route's request-body limit: 10 MiB as upstream, unless the route declares less in its
 * OpenAPI `detail` with `bodyLimit(bytes)`. The declaration is the one the server enforces and the
 * one the API document shows (`x-max-body-bytes`), so the two cannot drift apart.
 *
 * Only the hot routes declare less (1 MiB, as they have always documented). Smaller limits on the
 * other small-bodied routes would bound nothing: any valid root key may send 10 MiB to
 * keys.createKey, and what bounds all of them together is the body budget (body-reader.ts).
 */
const MiB = 1024 * 1024;

export const DEFAULT_BODY_LIMIT_BYTES = 10 * MiB;

/** The limit of keys.verifyKey and ratelimit(s).limit. */
export const HOT_BODY_LIMIT_BYTES = 1 * MiB;

const EXTENSION = "x-max-body-bytes";

/** The `detail` fields that declare a route's body limit. */
export function bodyLimit(bytes: number): { [EXTENSION]: number } {
  return { [EXTENSION]: bytes };
}

interface DeclaredRoute {
  path: string;
  hooks?: { detail?: unknown };
}

/** Route path → declared limit, from the app's routes (every route not in it has the default). */
export function declaredBodyLimits(routes: readonly DeclaredRoute[]): Map<string, number> {
  const limits = new Map<string, number>();
  for (const route of routes) {
    const declared = (route.hooks?.detail as Record<string, unknown> | undefined)?.[EXTENSION];
    if (typeof declared === "number") limits.set(route.path, declared);
  }
  return limits;
}
