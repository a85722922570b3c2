import { Elysia } from "elysia";
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { MultiLimitBody, MultiLimitData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const ratelimitMultiLimitRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/ratelimit.multiLimit", ({ body, request }) => ok(deps.services.ratelimits.multiLimit(deps.principal(request), body)), {
    body: MultiLimitBody,
    detail: {
      summary: "Check several rate limits at once", tags: ["ratelimit"],
      description: "Charges every check or none. Needs `limit` on every namespace (and `create_namespace` for new ones).",
      ...documented({ data: MultiLimitData, errors: ["ratelimit_namespace_gone"] }),
    },
  });
