/** `POST /v2/ratelimit.multiLimit`: check several rate limits at once. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { MultiLimitBody, MultiLimitData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const ratelimitMultiLimitRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimit.multiLimit",
  example: [{namespace: "api.requests", identifier: "user_1234", limit: 100, duration: 60000}],
  body: MultiLimitBody,
  detail: {
    summary: "Check several rate limits at once", tags: ["ratelimits"],
    description: "Charges every check or none. Needs `limit` on every namespace (and `create_namespace` for new ones).",
    ...documented({ data: MultiLimitData, errors: ["ratelimit_namespace_gone", "workspace_quota_exceeded"] }),
  },
  handle: (body, request, info) => ok(deps.services.ratelimits.multiLimit(deps.principal(request, info), body)),
});
