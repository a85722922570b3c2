/**
 * Per-request facts: the request id (`req_…`, also sent as `X-Request-Id`), the start time and,
 * once authenticated, the principal. The pipeline holds each request's in hand; the Elysia hooks
 * share theirs through a WeakMap owned by one app, so it goes away with the request.
 */
import { newId } from "../lib/ids.ts";
import type { PreparedRootKey, Principal } from "../services/auth/index.ts";

export interface RequestInfo {
  requestId: string;
  startedAtMs: number;
  /** Who the request was authenticated as, once it was (for its access-log line). */
  principal: Principal | undefined;
  /** The root key found before the request was handled, where root keys are looked up asynchronously (the cluster mode). */
  preparedRootKey?: PreparedRootKey;
}

/** A new request's facts: its id and the time it started. */
export function newRequestInfo(): RequestInfo {
  return { requestId: newId("req"), startedAtMs: performance.now(), principal: undefined };
}

export class RequestContexts {
  private readonly byRequest = new WeakMap<Request, RequestInfo>();

  /** The info of this request, created on first use. */
  of(request: Request): RequestInfo {
    let info = this.byRequest.get(request);
    if (!info) {
      info = newRequestInfo();
      this.byRequest.set(request, info);
    }
    return info;
  }
}
