import { Elysia } from "elysia";
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { LimitBody } from "../ratelimit/schemas.ts";

export const ratelimitsLimitRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/ratelimits.limit", ({ body, request }) => ok(deps.services.ratelimits.limit(deps.principal(request), body)), {
    body: LimitBody,
    detail: {
      summary: "Check a rate limit", tags: ["ratelimits"],
      description: "Always 200 with `success`. Needs `ratelimit.*.limit` or `ratelimit.<namespaceId>.limit`; a new namespace also needs `ratelimit.*.create_namespace`.",
    },
  });
