/**
 * The hot routes (keys.verifyKey, ratelimit(s).limit) answered straight from Bun's router instead
 * of through Elysia's per-request hook chain, which on its own costs a large share of a bare
 * Bun.serve's throughput. Each hot route is declared once (path, body schema, body limit, handler)
 * and also registered with Elysia, which serves its OpenAPI entry and `app.handle`; over HTTP this
 * lane answers it. The lane runs the same pieces in the same order as the app: request id →
 * in-flight cap → JSON body within its bounds → schema validation → handler (which authenticates)
 * → envelope, or the one error renderer; then the access log and metrics. Answers leave together
 * at the end of the event-loop turn (see `endOfTurn`).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { parseJsonBody } from "./body.ts";
import type { BodyReader } from "./body-reader.ts";
import { admitRequest, type PendingRequests } from "./in-flight.ts";
import { BodyValidator } from "./validation.ts";
import type { Ok } from "./envelope.ts";
import type { ErrorRenderer } from "./errors.ts";
import { jsonTextResponse } from "./json.ts";
import { jsonText } from "../lib/raw-json.ts";
import type { MetricsRegistry } from "./metrics.ts";
import type { AnsweredRequest } from "./access-log.ts";
import { newRequestInfo, type RequestInfo } from "./request-context.ts";

/** One operation as both the Elysia route and this lane serve it. */
export interface HotRoute<S extends TSchema = TSchema> {
  path: string;
  body: S;
  /** The largest body the route reads (see route-bodies.ts). */
  bodyLimitBytes: number;
  /** Runs after the body passed `body`; throws AppError for a failure. `info` is there when the lane runs it. */
  handle(body: Static<S>, request: Request, info?: RequestInfo): Ok | Promise<Ok>;
}

export interface HotLane {
  errors: ErrorRenderer;
  metrics: MetricsRegistry;
  log(answered: AnsweredRequest): void;
  bodies: BodyReader;
  maxRequestsInFlight: number;
}

type BunRoutes = Record<string, { POST: (request: Request, server: PendingRequests) => Promise<Response> }>;

/** The `routes` table for Bun.serve: POST of each hot path; other methods fall through to Elysia. */
export function hotRoutes(routes: readonly HotRoute[], lane: HotLane): BunRoutes {
  const table: BunRoutes = {};
  for (const route of routes) table[route.path] = { POST: handler(route, lane) };
  return table;
}

/**
 * The success envelope as JSON. Request ids are `req_` and base58, nothing to escape, so the
 * common case stringifies only `data` instead of building and walking the envelope object; a large
 * stored meta in it goes in as its text (lib/raw-json.ts).
 */
export function envelopeJson(requestId: string, result: Ok): string {
  if (result.extra !== undefined || result.data === undefined) return JSON.stringify({ meta: { requestId }, data: result.data, ...result.extra });
  return `{"meta":{"requestId":"${requestId}"},"data":${jsonText(result.data)}}`;
}

let turnEnd: Promise<void> | undefined;

/**
 * Resolves once the requests read in this turn of the event loop have run (one setImmediate per
 * turn, shared). Answering then instead of at once lets Bun send the turn's responses together,
 * which under many connections costs the server less CPU per request and lowers the p50 too.
 */
export function endOfTurn(): Promise<void> {
  return (turnEnd ??= new Promise((resolve) => setImmediate(() => {
    turnEnd = undefined;
    resolve();
  })));
}

function handler(route: HotRoute, lane: HotLane): (request: Request, server: PendingRequests) => Promise<Response> {
  const validator = new BodyValidator(route.body);
  return async (request, server) => {
    const info = newRequestInfo();
    let response: Response;
    try {
      admitRequest(server, lane.maxRequestsInFlight);
      // The answer waits for the end of the turn anyway (endOfTurn): an await more or less costs nothing.
      const body = await parseJsonBody(lane.bodies, request, { limitBytes: route.bodyLimitBytes, info });
      validator.check(body);
      const result = await route.handle(body, request, info);
      lane.metrics.observeResult(route.path, result);
      response = jsonTextResponse(envelopeJson(info.requestId, result), 200, info.requestId);
    } catch (error) {
      response = lane.errors.render(error, "UNKNOWN", request, info.requestId);
    }
    await endOfTurn();
    lane.log({ request, route: route.path, status: response.status, info });
    return response;
  };
}
