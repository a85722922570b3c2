import { Elysia } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { ListOverridesBody, overrideData } from "./schemas.ts";

export const ratelimitListOverridesRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/ratelimit.listOverrides", ({ body, request }) => {
    const page = deps.services.ratelimits.listOverrides(deps.principal(request), body);
    return okPage(page.items.map(overrideData), page.cursor);
  }, {
    body: ListOverridesBody,
    detail: { summary: "List rate-limit overrides", tags: ["ratelimit"], description: "`data` is the page, with `pagination`. Needs `read_override`." },
  });
