/** `POST /v2/ratelimit.setOverride`: set a rate-limit override. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { OverrideIdData, SetOverrideBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const ratelimitSetOverrideRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimit.setOverride",
  example: {namespace: "api.requests", identifier: "user_1234", limit: 1000, duration: 60000},
  body: SetOverrideBody,
  detail: {
    summary: "Set a rate-limit override", tags: ["ratelimits"], description: "Creates or replaces; the same identifier keeps its `overrideId`. Needs `set_override`. A namespace holds at most 100 wildcard overrides by default (`TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES`): a new one beyond is 412, replacing one is not.",
    ...documented({ data: OverrideIdData, errors: ["ratelimit_namespace_not_found", "precondition_failed", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.ratelimits.setOverride(deps.principal(request, info), body)),
});
