/**
 * The cap on requests in flight, read from Bun's own count of requests not yet answered
 * (`pendingRequests`, the asking one included): a comparison per request, with no counter to keep
 * and none to leak when a client goes away mid-request. Beyond the cap: 503 with Retry-After.
 */
import { AppError } from "../errors/app-error.ts";

export interface PendingRequests {
  readonly pendingRequests: number;
}

/** Throws 503 `overloaded` when more than `maxInFlight` requests are in flight. */
export function admitRequest(server: PendingRequests | null | undefined, maxInFlight: number): void {
  if (server && server.pendingRequests > maxInFlight) {
    throw new AppError("overloaded", { detail: `The service is answering as many requests at once as it accepts (${maxInFlight}); retry shortly.`, retryAfterS: 1 });
  }
}
