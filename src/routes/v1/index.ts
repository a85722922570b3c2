/** v1's two hot paths, served only under TOLLGATE_V1_PATHS=on (a migration aid; no other v1 path). */
import type { V1Operation } from "../../http/v1.ts";
import type { RouteDeps } from "../deps.ts";
import { v1LimitRoute } from "./limit.ts";
import { v1VerifyKeyRoute } from "./verifyKey.ts";

export const v1Operations = (deps: RouteDeps): V1Operation[] => [v1VerifyKeyRoute(deps), v1LimitRoute(deps)];
