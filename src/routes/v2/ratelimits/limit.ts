import type { RouteDeps } from "../../deps.ts";
import { limitRoute } from "../ratelimit/limit.ts";

export const RATELIMITS_LIMIT_PATH = "/v2/ratelimits.limit";

export const ratelimitsLimitRoute = (deps: RouteDeps) => limitRoute(deps, RATELIMITS_LIMIT_PATH, "ratelimits");
