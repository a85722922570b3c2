import { Elysia } from "elysia";
import { bodyLimit, HOT_BODY_LIMIT_BYTES } from "../../../http/route-bodies.ts";
import { ok } from "../../../http/envelope.ts";
import type { HotRoute } from "../../../http/hot-routes.ts";
import type { RouteDeps } from "../../deps.ts";
import { LimitBody, LimitData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

/**
 * `limit` of both path families (`/v2/ratelimit.limit`, `/v2/ratelimits.limit`): one shape. A hot
 * route: over HTTP the lane in http/hot-routes.ts answers it; the Elysia route documents it.
 */
export const limitOperation = (deps: RouteDeps, path: string): HotRoute<typeof LimitBody> => ({
  path,
  body: LimitBody,
  bodyLimitBytes: HOT_BODY_LIMIT_BYTES,
  handle: (body, request, info) => ok(deps.services.ratelimits.limit(deps.principal(request, info), body)),
});

export const limitRoute = (deps: RouteDeps, path: string, tag: string) => {
  const op = limitOperation(deps, path);
  return new Elysia().post(op.path, ({ body, request }) => op.handle(body, request), {
    body: op.body,
    detail: {
      summary: "Check a rate limit", tags: [tag],
      description: "Always 200 with `success`. Needs `ratelimit.*.limit` or `ratelimit.<namespaceId>.limit`; a new namespace also needs `ratelimit.*.create_namespace`.",
      ...bodyLimit(op.bodyLimitBytes),
      ...documented({ data: LimitData, errors: ["ratelimit_namespace_gone"] }),
    },
  });
};

export const RATELIMIT_LIMIT_PATH = "/v2/ratelimit.limit";

export const ratelimitLimitRoute = (deps: RouteDeps) => limitRoute(deps, RATELIMIT_LIMIT_PATH, "ratelimit");
