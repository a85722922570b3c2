/**
 * Per-request facts the hooks share: the request id (`req_…`, also sent as `X-Request-Id`) and the
 * start time. Kept in a WeakMap owned by one app, so it goes away with the request.
 */
import { newId } from "../lib/ids.ts";

export interface RequestInfo {
  requestId: string;
  startedAtMs: number;
}

/** A new request's facts: its id and the time it started. */
export function newRequestInfo(): RequestInfo {
  return { requestId: newId("req"), startedAtMs: performance.now() };
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
