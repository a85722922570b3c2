/** `limit` of both path families (`/v2/ratelimit.limit`, `/v2/ratelimits.limit`): one shape, one declaration. */
import { ok } from "../../../http/envelope.ts";
import { HOT_BODY_LIMIT_BYTES, operation } from "../../../http/operation.ts";
import type { RouteDeps } from "../../deps.ts";
import { LimitBody, LimitData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

/** `plural`: the specification's `/v2/ratelimits.*` path, named so in its summary beside the singular one in the one group. */
export const limitRoute = (deps: RouteDeps, path: string, plural: boolean) => operation({
  path,
  example: {namespace: "api.requests", identifier: "user_1234", limit: 100, duration: 60000},
  body: LimitBody,
  bodyLimitBytes: HOT_BODY_LIMIT_BYTES,
  detail: {
    summary: plural ? "Check a rate limit (plural path)" : "Check a rate limit", tags: ["ratelimits"],
    description: "A decision is always 200 with `success`. Needs `ratelimit.*.limit` or `ratelimit.<namespaceId>.limit`; a new namespace also needs `ratelimit.*.create_namespace`, and answers 429 `workspace_quota_exceeded` when the workspace holds `TOLLGATE_WORKSPACE_MAX_NAMESPACES` namespaces already (checks of existing namespaces go on).",
    ...documented({ data: LimitData, errors: ["ratelimit_namespace_gone", "workspace_quota_exceeded"] }),
  },
  handle: (body, request, info) => ok(deps.services.ratelimits.limit(deps.principal(request, info), body)),
});

export const RATELIMIT_LIMIT_PATH = "/v2/ratelimit.limit";

export const ratelimitLimitRoute = (deps: RouteDeps) => limitRoute(deps, RATELIMIT_LIMIT_PATH, false);
