/**
 * The one place errors become responses: AppError → its catalogue entry (a body that fails its
 * schema is already one, http/validation.ts); Elysia's parse and not-found errors → 400 / 404 (405
 * when the path has other methods); an error that says a cluster node's PostgreSQL or Redis is
 * unreachable (the classifier boot-cluster.ts passes) → `service_unavailable` naming the server and
 * nothing of its address, logged as a warning with the client's code; anything else → 500 with a generic detail, the cause logged with the
 * request id. v1's paths (http/v1.ts) get the same error in v1's body (`renderV1`). The code each request was answered with is kept for the access log,
 * in a WeakMap written only on the error path, so a success pays nothing for it.
 * Rendering never throws, whatever the request: its path is read without `new URL` (a request
 * without a Host has a URL that does not parse), and a failure of the renderer itself still
 * answers the 500 envelope. Every error answer carries the console's protective headers.
 */
import { AppError } from "../errors/app-error.ts";
import { ERROR_CATALOGUE, errorTypePath, type ErrorCode } from "../errors/catalogue.ts";
import type { Logger } from "../lib/logger.ts";
import { jsonResponse } from "./json.ts";
import { PROTECTIVE_HEADERS } from "./protective-headers.ts";
import { pathOf } from "./request-host.ts";

export interface ErrorRenderer {
  render(error: unknown, code: string | number, request: Request, requestId: string): Response;
  /** The same error as v1's body, `{error:{code, docs, message, requestId}}` (http/v1.ts), with `extraHeaders`. */
  renderV1(error: unknown, request: Request, requestId: string, extraHeaders: Record<string, string>): Response;
  /** The catalogue code this request's error answer was rendered from; undefined when none was. */
  codeOf(request: Request): ErrorCode | undefined;
}

/** Which server an error says is unreachable (`store`, e.g. "PostgreSQL") and the client's code that says so; undefined for any other error. */
export type UnreachableStore = (error: unknown) => { store: string; code: string } | undefined;

/** Normalises anything thrown into an AppError; unexpected errors become `unexpected_error`. */
function toAppError(error: unknown, code: string | number, unreachable: UnreachableStore): AppError {
  if (error instanceof AppError) return error;
  // Elysia wraps whatever the body parser throws in a ParseError; the parser's own AppError (413, 400) wins.
  if (code === "PARSE") {
    const cause = error instanceof Error ? error.cause : undefined;
    return cause instanceof AppError ? cause : new AppError("request_body_unreadable", { detail: "The request body is not valid JSON." });
  }
  if (code === "NOT_FOUND") return new AppError("route_not_found", { detail: "No route answers this method and path." });
  const away = unreachable(error);
  if (away !== undefined) return new AppError("service_unavailable", { detail: `${away.store} cannot be reached from this node; try again shortly.`, cause: error });
  return new AppError("unexpected_error", { detail: "An unexpected error occurred. Quote the request id when you report it.", cause: error });
}

/** Routes whose every error the upstream API document (and so the SDK) declares as problem+json. */
const PROBLEM_JSON_ROUTES = new Set(["/v2/identities.deleteIdentity"]);

/**
 * The error's content type. Upstream answers `application/problem+json` when the client accepts it
 * (`application/problem+json`, `application/*` or `*\/*`), schema-validation 400s excepted. The SDK
 * always sends `Accept: application/json` but only recognises its typed errors under the content
 * type the API document declares: problem+json for every 429 and for every error of the routes
 * above, so those get it whatever the Accept header says.
 */
function wantsProblemJson(request: Request, status: number, schemaError: boolean): boolean {
  if (status === 429) return true;
  if (PROBLEM_JSON_ROUTES.has(pathOf(request.url))) return true;
  if (schemaError) return false;
  return /application\/problem\+json|application\/\*|\*\/\*/.test(request.headers.get("accept") ?? "");
}

/**
 * A missing or malformed Authorization header: 401 in upstream's v1 (`key required`), 400 in v2,
 * where a missing one is upstream's schema failure of the header (its one field error says so).
 */
function v1Unauthorized(error: AppError): boolean {
  return error.code === "authentication_malformed" || (error.code === "invalid_input" && error.errors?.[0]?.location === "header.Authorization");
}

/**
 * Upstream v1's machine-readable code for an error: its enum had one code per status (and
 * INSUFFICIENT_PERMISSIONS beside FORBIDDEN for a missing permission); what v1 had no code for is
 * INTERNAL_SERVER_ERROR, the status still tollgate's.
 */
function v1ErrorCode(code: ErrorCode, status: number): string {
  if (status === 401) return "UNAUTHORIZED";
  if (code === "insufficient_permissions") return "INSUFFICIENT_PERMISSIONS";
  switch (status) {
    case 400: case 408: case 413: return "BAD_REQUEST";
    case 401: return "UNAUTHORIZED";
    case 403: return "FORBIDDEN";
    case 404: return "NOT_FOUND";
    case 405: return "METHOD_NOT_ALLOWED";
    case 409: return "CONFLICT";
    case 412: return "PRECONDITION_FAILED";
    case 429: return "TOO_MANY_REQUESTS";
    default: return "INTERNAL_SERVER_ERROR";
  }
}

/** The methods that have a route at a path, or undefined when none has. */
export type RouteMethods = (path: string) => readonly string[] | undefined;

/**
 * Builds the renderer for one app: `docsUrl` is the base of `type` URLs. An error answer to a
 * request whose body may still be on its way (`bodyLeftUnread`) closes the connection: the client
 * may be sending megabytes more, which would otherwise be read only to be thrown away.
 */
export function createErrorRenderer(
  docsUrl: () => string, logger: Logger, bodyLeftUnread: (request: Request) => boolean = () => false, routeMethods: RouteMethods = () => undefined,
  unreachable: UnreachableStore = () => undefined,
  onUnreachable: (away: { store: string; code: string }) => void = () => undefined,
): ErrorRenderer {
  const renderedCodes = new WeakMap<Request, ErrorCode>();
  /** What both bodies share: the AppError, its catalogue entry, the logging, the headers other than the content type. */
  const resolve = (error: unknown, code: string | number, request: Request, requestId: string) => {
    const path = pathOf(request.url);
    // No route for this method: 405 when the path has routes for others, 404 when it has none.
    const allow = code === "NOT_FOUND" ? routeMethods(path) : undefined;
    const appError = allow === undefined ? toAppError(error, code, unreachable)
      : new AppError("method_not_allowed", { detail: `${request.method} is not allowed here; the path answers ${allow.join(", ")}.` });
    renderedCodes.set(request, appError.code);
    const kind = ERROR_CATALOGUE[appError.code];
    if (appError.code === "unexpected_error") {
      const cause = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
      logger.error("unexpected error", { requestId, method: request.method, path, cause });
    }
    const away = appError.code === "service_unavailable" ? unreachable(error) : undefined;
    // The client's code only: its message could quote the server's address. A debug line: the
    // outage itself is one warning when it starts and one when it ends (onUnreachable).
    if (away) {
      onUnreachable(away);
      logger.debug("a server is unreachable", { requestId, method: request.method, path, server: away.store, code: away.code });
    }
    const headers = {
      ...PROTECTIVE_HEADERS,
      ...(appError.retryAfterS === undefined ? {} : { "retry-after": String(appError.retryAfterS) }),
      ...(allow === undefined ? {} : { allow: allow.join(", ") }),
      ...(bodyLeftUnread(request) ? { connection: "close" } : {}),
    };
    return { appError, kind, headers };
  };
  const render = (error: unknown, code: string | number, request: Request, requestId: string): Response => {
    const { appError, kind, headers } = resolve(error, code, request, requestId);
    const body = {
      meta: { requestId },
      error: {
        title: kind.title,
        detail: appError.detail,
        status: kind.status,
        type: `${docsUrl()}/api-reference/errors-v2/${errorTypePath(appError.code)}`,
        ...(kind.status === 400 ? { errors: appError.errors ?? [] } : {}),
      },
    };
    const problem = wantsProblemJson(request, kind.status, appError.code === "invalid_input");
    return jsonResponse(body, kind.status, requestId, problem ? { ...headers, "content-type": "application/problem+json" } : headers);
  };
  const renderV1 = (error: unknown, request: Request, requestId: string, extraHeaders: Record<string, string>): Response => {
    const { appError, kind, headers } = resolve(error, "UNKNOWN", request, requestId);
    const status = v1Unauthorized(appError) ? 401 : kind.status;
    const body = {
      error: {
        code: v1ErrorCode(appError.code, status),
        docs: `${docsUrl()}/api-reference/errors-v2/${errorTypePath(appError.code)}`,
        // v1's body has no `errors[]`: a validation failure names its first field in the message.
        message: appError.errors?.[0] === undefined ? appError.detail : `${appError.errors[0].location}: ${appError.errors[0].message}`,
        requestId,
      },
    };
    return jsonResponse(body, status, requestId, { ...headers, ...extraHeaders });
  };
  return {
    codeOf: (request) => renderedCodes.get(request),
    render(error, code, request, requestId) {
      try {
        return render(error, code, request, requestId);
      } catch (failure) {
        // Nothing above should throw; if it does, the client still gets the envelope and the log the cause.
        return render(failure, "UNKNOWN", request, requestId);
      }
    },
    renderV1(error, request, requestId, extraHeaders) {
      try {
        return renderV1(error, request, requestId, extraHeaders);
      } catch (failure) {
        return renderV1(failure, request, requestId, extraHeaders);
      }
    },
  };
}
