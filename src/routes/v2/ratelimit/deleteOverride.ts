/** `POST /v2/ratelimit.deleteOverride`: delete a rate-limit override. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { OverrideRefBody } from "./schemas.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const ratelimitDeleteOverrideRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimit.deleteOverride",
  example: {namespace: "api.requests", identifier: "user_1234"},
  body: OverrideRefBody,
  detail: {
    summary: "Delete a rate-limit override", tags: ["ratelimits"], description: "The identifier must be the override's own, `*` included. Needs `delete_override`.",
    ...documented({ data: EmptyData, errors: ["ratelimit_namespace_not_found", "ratelimit_override_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.ratelimits.deleteOverride(deps.principal(request, info), body)),
});
