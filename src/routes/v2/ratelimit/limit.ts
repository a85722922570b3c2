import { Elysia } from "elysia";
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { LimitBody } from "./schemas.ts";

export const ratelimitLimitRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/ratelimit.limit", ({ body, request }) => ok(deps.services.ratelimits.limit(deps.principal(request), body)), {
    body: LimitBody,
    detail: {
      summary: "Check a rate limit", tags: ["ratelimit"],
      description: "Always 200 with `success`. Needs `ratelimit.*.limit` or `ratelimit.<namespaceId>.limit`; a new namespace also needs `ratelimit.*.create_namespace`.",
    },
  });
