/**
 * What each route declares about its request body: its limit and its schema. The limit is 10 MiB
 * as upstream, unless the route declares less in its OpenAPI `detail` with `bodyLimit(bytes)`: the
 * declaration is the one the server enforces and the one the API document shows
 * (`x-max-body-bytes`), so the two cannot drift apart.
 *
 * Only the hot routes declare less (1 MiB, as they have always documented). Smaller limits on the
 * other small-bodied routes would bound nothing: any valid root key may send 10 MiB to
 * keys.createKey, and what bounds all bodies together is the body budget (body-reader.ts).
 */
import type { TSchema } from "@sinclair/typebox";
import { BodyValidator } from "./validation.ts";

const MiB = 1024 * 1024;

export const DEFAULT_BODY_LIMIT_BYTES = 10 * MiB;

/** The limit of keys.verifyKey and ratelimit(s).limit. */
export const HOT_BODY_LIMIT_BYTES = 1 * MiB;

const EXTENSION = "x-max-body-bytes";

/** The `detail` fields that declare a route's body limit. */
export function bodyLimit(bytes: number): { [EXTENSION]: number } {
  return { [EXTENSION]: bytes };
}

/** A route as the app lists it (`app.routes`). */
export interface DeclaredRoute {
  path: string;
  hooks?: { detail?: unknown; body?: unknown };
}

export class RouteBodies {
  private readonly limits = new Map<string, number>();
  private readonly schemas = new Map<string, TSchema>();
  /** Compiled on each route's first body, so that a start does not compile every schema a second time. */
  private readonly validators = new Map<string, BodyValidator>();

  /** Reads every route's declarations; call once all routes are registered. */
  learn(routes: readonly DeclaredRoute[]): void {
    for (const route of routes) {
      const declared = (route.hooks?.detail as Record<string, unknown> | undefined)?.[EXTENSION];
      if (typeof declared === "number") this.limits.set(route.path, declared);
      const schema = route.hooks?.body;
      if (typeof schema === "object" && schema !== null) this.schemas.set(route.path, schema as TSchema);
    }
  }

  limitBytes(route: string): number {
    return this.limits.get(route) ?? DEFAULT_BODY_LIMIT_BYTES;
  }

  /** Throws the 400 for a body that fails the route's schema (a route without one accepts any). */
  validate(route: string, body: unknown): void {
    let validator = this.validators.get(route);
    if (validator === undefined) {
      const schema = this.schemas.get(route);
      if (schema === undefined) return;
      validator = new BodyValidator(schema);
      this.validators.set(route, validator);
    }
    validator.check(body);
  }
}
