import { Elysia, t } from "elysia";
import { bodyLimit, HOT_BODY_LIMIT_BYTES } from "../../../http/route-bodies.ts";
import { ok } from "../../../http/envelope.ts";
import type { HotRoute } from "../../../http/hot-routes.ts";
import { Int, MAX_SAFE_INT, RatelimitDurationMs, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";

const VerifyKeyBody = strictObject({
  key: t.String({ minLength: 1, maxLength: 512, description: "The end-user key" }),
  tags: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 512 }), { maxItems: 20, description: "Up to 20 tags recorded with the verification for analytics" })),
  permissions: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: "Permission query: names, AND, OR, parentheses" })),
  credits: t.Optional(strictObject({ cost: Int({ minimum: 0, maximum: 1_000_000_000_000, description: "Credits to spend (default 1); 0 checks without spending" }) }, "Credit spend of this verification")),
  ratelimits: t.Optional(t.Array(strictObject({
    name: t.String({ minLength: 1, maxLength: 255, description: "Name of a limit of the key or its identity, or of an ad-hoc limit" }),
    cost: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT, description: "Units this request consumes (default 1)" })),
    limit: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT, description: "Requests per window, for an ad-hoc limit or to override the stored one" })),
    duration: t.Optional(RatelimitDurationMs("Window length in milliseconds, 1000 to 2592000000 (30 days), with `limit`")),
  }), { maxItems: 50, description: "Rate limits to apply; all pass or none is charged" })),
});

/** A hot route: over HTTP the lane in http/hot-routes.ts answers it; the Elysia route documents it. */
export const verifyKeyOperation = (deps: RouteDeps): HotRoute<typeof VerifyKeyBody> => ({
  path: "/v2/keys.verifyKey",
  body: VerifyKeyBody,
  bodyLimitBytes: HOT_BODY_LIMIT_BYTES,
  handle: async (body, request, info) => ok(await deps.services.verification.verifyKey(deps.principal(request, info), body)),
});

export const verifyKeyRoute = (deps: RouteDeps) => {
  const op = verifyKeyOperation(deps);
  return new Elysia().post(op.path, ({ body, request }) => op.handle(body, request), {
    body: op.body,
    detail: { summary: "Verify a key", tags: ["keys"], description: "Always 200 with `valid` and `code` for a well-formed request.", ...bodyLimit(op.bodyLimitBytes) },
  });
};
