/**
 * `POST /v1/ratelimits.limit` (TOLLGATE_V1_PATHS=on): upstream v1's request and bare answer over
 * the one rate-limit service, with the root key and permissions of v2's `ratelimits.limit`.
 * `async`, `meta` and `resources` are taken and ignored: v2 removed them (the spec's Versioning,
 * item 6), and every decision here is already made where the windows are.
 */
import { t } from "elysia";
import { HOT_BODY_LIMIT_BYTES } from "../../http/operation.ts";
import { Int } from "../../http/schemas.ts";
import { v1Operation } from "../../http/v1.ts";
import type { LimitOutcome } from "../../services/ratelimit/index.ts";
import type { RouteDeps } from "../deps.ts";
import { Identifier, LimitBody, NamespaceRef } from "../v2/ratelimit/schemas.ts";
import { RATELIMITS_LIMIT_PATH } from "../v2/ratelimits/limit.ts";

export const V1_LIMIT_PATH = "/v1/ratelimits.limit";

// A plain object, as upstream's v1 schema (unknown fields ignored); the bounds are v2's.
const V1LimitBody = t.Object({
  namespace: t.Optional(NamespaceRef),
  identifier: Identifier,
  limit: LimitBody.properties.limit,
  duration: LimitBody.properties.duration,
  cost: t.Optional(Int({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  async: t.Optional(t.Boolean()),
  meta: t.Optional(t.Record(t.String(), t.Unknown())),
  resources: t.Optional(t.Array(t.Unknown(), { maxItems: 100 })),
});

const bare = (outcome: LimitOutcome) => ({ limit: outcome.limit, remaining: outcome.remaining, reset: outcome.reset, success: outcome.success });

export const v1LimitRoute = (deps: RouteDeps) => v1Operation({
  path: V1_LIMIT_PATH,
  body: V1LimitBody,
  bodyLimitBytes: HOT_BODY_LIMIT_BYTES,
  rootKey: true,
  decidesAs: RATELIMITS_LIMIT_PATH,
  handle: async (body, request, info) => bare(await deps.services.ratelimits.limit(deps.principal(request, info), {
    namespace: body.namespace ?? "default",
    identifier: body.identifier,
    limit: body.limit,
    duration: body.duration,
    cost: body.cost ?? 1,
  })),
});
