/** Request-schema pieces shared by several routes. Every object rejects unknown fields. */
import { t } from "elysia";
import { Type, type IntegerOptions, type TProperties } from "@sinclair/typebox";
import { failedValidation } from "./validation.ts";
import { MAX_DURATION_MS, MIN_DURATION_MS } from "../services/ratelimit/index.ts";

/** An object schema that rejects unknown fields (400 naming the field). */
export const strictObject = <P extends TProperties>(props: P, description?: string) =>
  t.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });

/**
 * For a route whose whole body is `t.Optional(...)`: Elysia skips validating a sent body that is
 * not an object (a string, a number, `true`, `[]`, `null`) and hands it to the handler. The handler
 * calls this first, so such a body is the same 400 a failed validation is; no body lists as `{}`.
 */
export function optionalObjectBody<T extends object>(body: T | null | undefined, path: string): T | Record<string, never> {
  if (body === undefined) return {};
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw failedValidation(path, [{ location: "body", message: "Expected an object, or no body at all" }]);
  }
  return body;
}

/**
 * A JSON integer. Elysia's `t.Integer` also accepts numeric strings ("20"); the API takes numbers
 * only, as upstream's schema validation does.
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options);

/** The bound of every count without a smaller natural one: larger JSON numbers lose precision in JavaScript. */
export const MAX_SAFE_INT = Number.MAX_SAFE_INTEGER;

export const IDENTIFIER_PATTERN = "^[a-zA-Z0-9_]+$";

export const ApiId = t.String({ minLength: 3, maxLength: 255, pattern: IDENTIFIER_PATTERN, description: "API identifier (`api_…`)" });
export const KeyId = t.String({ minLength: 3, maxLength: 255, pattern: IDENTIFIER_PATTERN, description: "Key identifier (`key_…`)" });
export const ExternalId = t.String({ minLength: 1, maxLength: 255, pattern: "^[a-zA-Z0-9_.-]+$", description: "Your identifier of the key's owner" });
/** A `meta` object of a key or an identity: upstream's 100 properties here, its 1 MB in services/meta (400 beyond either). */
export const metaObject = (description: string) => t.Record(t.String(), t.Unknown(), {
  maxProperties: 100,
  description: `${description}. At most 100 properties and 1 MB of JSON: 1,048,576 bytes of its compact UTF-8 JSON text (400 beyond)`,
});
export const Meta = metaObject("Arbitrary JSON object, returned by every verification: keep it under 10 KB");
export const PermissionSlug = t.String({ minLength: 1, maxLength: 100, pattern: "^[a-zA-Z0-9_:\\-\\.\\*]+$" });
export const RoleName = t.String({ minLength: 1, maxLength: 100, pattern: "^[a-zA-Z0-9_:\\-\\.\\*]+$" });
export const UnixMs = (description: string) => Int({ minimum: 0, maximum: 4102444800000, description });
/**
 * A list's `limit`: the most items a page holds. A page may hold fewer (TOLLGATE_LIST_PAGE_BYTES
 * ends it early), so a client follows the cursor rather than counting items.
 */
export const pageLimitDescription = (defaultLimit: number) =>
  `Most items in a page, 1 to 100 (default ${defaultLimit}). A page may hold fewer: it ends early when its items would pass the `
  + "page byte budget (TOLLGATE_LIST_PAGE_BYTES, 4 MiB by default; always at least one item), so follow the cursor until there is none "
  + "rather than counting items";
export const PageLimit = Int({ minimum: 1, maximum: 100, description: pageLimitDescription(100) });
export const Cursor = t.String({ minLength: 1, maxLength: 1024, description: "Cursor from the previous page" });

/** A rate-limit window length: 1 second to 30 days everywhere, as upstream's ratelimit.limit. */
export const RatelimitDurationMs = (description: string) => Int({ minimum: MIN_DURATION_MS, maximum: MAX_DURATION_MS, description });

export const RatelimitConfigBody = strictObject({
  name: t.String({ minLength: 3, maxLength: 128, description: "Name of the limit" }),
  limit: Int({ minimum: 1, maximum: MAX_SAFE_INT, description: "Requests allowed per window" }),
  duration: RatelimitDurationMs("Window length in milliseconds, 1000 to 2592000000 (30 days)"),
  autoApply: t.Optional(t.Boolean({ description: "Apply on every verification (default false)" })),
});

export const Refill = strictObject({
  interval: t.Union([t.Literal("daily"), t.Literal("monthly")], { description: "daily (00:00 UTC) or monthly (on refillDay)" }),
  amount: Int({ minimum: 1, maximum: MAX_SAFE_INT, description: "Credits set at each refill" }),
  refillDay: t.Optional(Int({ minimum: 1, maximum: 31, description: "Day of the month for monthly refills" })),
}, "Automatic refill of `remaining`");

export const Credits = strictObject({
  remaining: t.Optional(t.Union([Int({ minimum: 0, maximum: MAX_SAFE_INT }), t.Null()], { description: "Remaining uses; null for unlimited" })),
  refill: t.Optional(Refill),
}, "Usage credits; each verification spends its cost");
