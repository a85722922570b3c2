/** `POST /v2/ratelimits.listOverrides`: list rate-limit overrides. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { ListOverridesBody, OverrideData, overrideData } from "../ratelimit/schemas.ts";
import { documented } from "../../../http/responses.ts";

/** The spec's page shape: the overrides and the next page's cursor inside `data`. */
const OverridePage = t.Object({
  overrides: t.Array(OverrideData, { description: "A page of the namespace's overrides" }),
  cursor: t.Optional(t.String({ description: "Pass as `cursor` for the next page; absent on the last page. A page may hold fewer overrides than `limit` and still have a next page" })),
});

export const ratelimitsListOverridesRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimits.listOverrides",
  example: {namespace: "api.requests", limit: 100},
  body: ListOverridesBody,
  detail: {
    summary: "List rate-limit overrides (plural path)", tags: ["ratelimits"], description: "`data: {overrides, cursor?}`; the cursor is left out on the last page. Needs `read_override`.",
    ...documented({ data: OverridePage, errors: ["ratelimit_namespace_not_found"] }),
  },
  handle: async (body, request, info) => {
    const page = await deps.services.ratelimits.listOverrides(deps.principal(request, info), body);
    return ok({ overrides: page.items.map(overrideData), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
  },
});
