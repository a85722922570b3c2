/** `POST /v2/ratelimits.limit`: the plural path of ratelimit.limit, the same declaration (ratelimit/limit.ts). */
import type { RouteDeps } from "../../deps.ts";
import { limitRoute } from "../ratelimit/limit.ts";

export const RATELIMITS_LIMIT_PATH = "/v2/ratelimits.limit";

export const ratelimitsLimitRoute = (deps: RouteDeps) => limitRoute(deps, RATELIMITS_LIMIT_PATH, true);
