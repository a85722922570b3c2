/** `limit` of both path families (`/v2/ratelimit.limit`, `/v2/ratelimits.limit`): one shape, one declaration. */
import { ok } from "../../../http/envelope.ts";
import { HOT_BODY_LIMIT_BYTES, operation } from "../../../http/operation.ts";
import type { RouteDeps } from "../../deps.ts";
import { LimitBody, LimitData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const limitRoute = (deps: RouteDeps, path: string, tag: string) => operation({
  path,
  body: LimitBody,
  bodyLimitBytes: HOT_BODY_LIMIT_BYTES,
  detail: {
    summary: "Check a rate limit", tags: [tag],
    description: "A decision is always 200 with `success`. Needs `ratelimit.*.limit` or `ratelimit.<namespaceId>.limit`; a new namespace also needs `ratelimit.*.create_namespace`, and answers 429 `workspace_quota_exceeded` when the workspace holds `TOLLGATE_WORKSPACE_MAX_NAMESPACES` namespaces already (checks of existing namespaces go on).",
    ...documented({ data: LimitData, errors: ["ratelimit_namespace_gone", "workspace_quota_exceeded"] }),
  },
  handle: (body, request, info) => ok(deps.services.ratelimits.limit(deps.principal(request, info), body)),
});

export const RATELIMIT_LIMIT_PATH = "/v2/ratelimit.limit";

export const ratelimitLimitRoute = (deps: RouteDeps) => limitRoute(deps, RATELIMIT_LIMIT_PATH, "ratelimit");
