import { Elysia } from "elysia";
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { ListOverridesBody, overrideData } from "../ratelimit/schemas.ts";

export const ratelimitsListOverridesRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/ratelimits.listOverrides", ({ body, request }) => {
    const page = deps.services.ratelimits.listOverrides(deps.principal(request), body);
    return ok({ overrides: page.items.map(overrideData), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
  }, {
    body: ListOverridesBody,
    detail: { summary: "List rate-limit overrides", tags: ["ratelimits"], description: "`data: {overrides, cursor?}`; the cursor is left out on the last page. Needs `read_override`." },
  });
