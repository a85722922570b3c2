/** `POST /v2/ratelimit.listOverrides`: list rate-limit overrides. */
import { okPage } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { ListOverridesBody, OverrideData, overrideData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf } from "../../../http/views.ts";

export const ratelimitListOverridesRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimit.listOverrides",
  example: {namespace: "api.requests", limit: 100},
  body: ListOverridesBody,
  detail: {
    summary: "List rate-limit overrides", tags: ["ratelimits"], description: "`data` is the page, with `pagination`. Needs `read_override`.",
    ...documented({ data: ListOf(OverrideData, "The namespace's overrides"), paged: true, errors: ["ratelimit_namespace_not_found"] }),
  },
  handle: async (body, request, info) => {
    const page = await deps.services.ratelimits.listOverrides(deps.principal(request, info), body);
    return okPage(page.items.map(overrideData), page.cursor);
  },
});
