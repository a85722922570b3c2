/** `POST /v2/ratelimit.getOverride`: get a rate-limit override. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { OverrideData, OverrideRefBody, overrideData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const ratelimitGetOverrideRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimit.getOverride",
  example: {namespace: "api.requests", identifier: "user_1234"},
  body: OverrideRefBody,
  detail: {
    summary: "Get a rate-limit override", tags: ["ratelimits"], description: "The override that applies to the identifier (exact, then wildcard). Needs `read_override`.",
    ...documented({ data: OverrideData, errors: ["ratelimit_namespace_not_found", "ratelimit_override_not_found"] }),
  },
  handle: async (body, request, info) => ok(overrideData(await deps.services.ratelimits.getOverride(deps.principal(request, info), body))),
});
