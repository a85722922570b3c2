/** What every operation factory receives: the services and the way to authenticate a request. */
import type { RequestInfo } from "../http/request-context.ts";
import type { Principal } from "../services/auth/index.ts";
import type { Services } from "../services/index.ts";

export interface RouteDeps {
  services: Services;
  /**
   * Authenticates the request's root key (400/401/403 AppError otherwise). Call it after validation.
   * The principal is kept on the request's `info`: one found before a large body was read is reused.
   */
  principal(request: Request, info: RequestInfo): Principal;
}
