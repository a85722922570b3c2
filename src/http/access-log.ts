/**
 * One log line per answered request (request id, method, route, status, duration in ms) and the
 * request metrics, from one Elysia hook that runs after the response is sent. An error line also
 * names the error's catalogue code and, when the request was authenticated, the root key's id and
 * its workspace. They are looked up only for an error line, and the principal rides on the
 * request's info, which every request has anyway: a success costs what it did. Nothing of the
 * request's headers or body is logged: the Authorization header and key strings never reach a log.
 * The route is the matched pattern, not the raw path, so logs and metrics stay free of whatever a
 * client puts in a URL; for an unmatched request the path is logged, without its query string.
 */
import { Elysia } from "elysia";
import type { ErrorCode } from "../errors/catalogue.ts";
import type { LogFields, Logger } from "../lib/logger.ts";
import { toMicroseconds } from "../lib/clock.ts";
import { UNMATCHED_ROUTE, type MetricsRegistry } from "./metrics.ts";
import type { RequestContexts, RequestInfo } from "./request-context.ts";
import { pathOf } from "./request-host.ts";

export interface AccessLogOptions {
  logger: Logger;
  contexts: RequestContexts;
  metrics: MetricsRegistry;
  /** The catalogue code an error answer was rendered from. */
  errorCodeOf(request: Request): ErrorCode | undefined;
}

const MAX_LOGGED_PATH = 200;

function statusOf(set: { status?: unknown }): number {
  return typeof set.status === "number" ? set.status : 200;
}


/** The error's code and who asked (ids only: never a key string or hash). */
function errorFields(opts: AccessLogOptions, request: Request, info: RequestInfo): LogFields {
  const errorCode = opts.errorCodeOf(request);
  const { principal } = info;
  return {
    ...(errorCode === undefined ? {} : { errorCode }),
    ...(principal === undefined ? {} : { rootKeyId: principal.rootKeyId, workspaceId: principal.workspaceId }),
  };
}

/** What the log and the metrics need of one answered request. */
export interface AnsweredRequest {
  request: Request;
  /** The matched route pattern, or empty when none matched. */
  route: string;
  status: number;
  info: RequestInfo;
}

/** Logs one answered request and counts it in the metrics; Elysia's hook and the hot-route lane both call it. */
export function requestLogger(opts: AccessLogOptions): (answered: AnsweredRequest) => void {
  return ({ request, route: matched, status, info }) => {
    const durationMs = performance.now() - info.startedAtMs;
    const route = matched || UNMATCHED_ROUTE;
    opts.metrics.observeRequest(route, status, durationMs);
    const level = status >= 500 ? "error" : "info";
    if (!opts.logger.enabled(level)) return;
    opts.logger[level]("request", {
      requestId: info.requestId,
      method: request.method,
      route,
      ...(route === UNMATCHED_ROUTE ? { path: pathOf(request.url).slice(0, MAX_LOGGED_PATH) } : {}),
      status,
      durationMs: toMicroseconds(durationMs),
      ...(status >= 400 ? errorFields(opts, request, info) : {}),
    });
  };
}

/** Registered before the routes, so its global hook sees every one of them. */
export const accessLog = (opts: AccessLogOptions) => {
  const log = requestLogger(opts);
  return new Elysia({ name: "access-log" }).onAfterResponse({ as: "global" }, ({ request, set, route }) => {
    log({ request, route, status: statusOf(set), info: opts.contexts.of(request) });
  });
};
