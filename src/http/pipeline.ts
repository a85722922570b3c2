/**
 * The one request pipeline every v2 operation runs through: request id → in-flight cap → JSON
 * body within its bounds (a large body only once the root key checks out, body-reader.ts) →
 * schema validation → handler (which authenticates) → envelope, or the one error renderer →
 * metrics → access log. It is served straight from Bun's router (`routes`): Elysia's per-request
 * hook chain costs a large share of a bare Bun.serve's throughput, and the operations need none
 * of it. Answers leave together at the end of the event-loop turn (see TurnEnd).
 */
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
import { bodyLimitOf, type Operation } from "./operation.ts";

export interface PipelineParts {
  errors: ErrorRenderer;
  metrics: MetricsRegistry;
  log(answered: AnsweredRequest): void;
  bodies: BodyReader;
  maxRequestsInFlight: number;
  /** Work to wait for before a request is read (the cluster mode's root-key lookup); undefined when there is none. */
  prepare?(request: Request, info: RequestInfo): Promise<void> | undefined;
}

type Handler = (request: Request, server: PendingRequests) => Promise<Response>;

/** The `routes` table of Bun.serve: POST of each operation; other methods fall through to Elysia. */
export type BunRoutes = Record<string, { POST: Handler }>;

/**
 * The success envelope as JSON. Request ids are `req_` and base58, nothing to escape, so the
 * common case stringifies only `data` instead of building and walking the envelope object; a large
 * stored meta in it goes in as its text (lib/raw-json.ts).
 */
export function envelopeJson(requestId: string, result: Ok): string {
  if (result.extra !== undefined || result.data === undefined) return JSON.stringify({ meta: { requestId }, data: result.data, ...result.extra });
  return `{"meta":{"requestId":"${requestId}"},"data":${jsonText(result.data)}}`;
}

/**
 * Resolves once the requests read in this turn of the event loop have run (one setImmediate per
 * turn, shared). Answering then instead of at once lets Bun send the turn's responses together,
 * which under many connections costs the server less CPU per request and lowers the p50 too.
 */
export class TurnEnd {
  private pending: Promise<void> | undefined;

  next(): Promise<void> {
    return (this.pending ??= new Promise((resolve) => setImmediate(() => {
      this.pending = undefined;
      resolve();
    })));
  }
}

export class Pipeline {
  private readonly turnEnd = new TurnEnd();

  constructor(private readonly parts: PipelineParts) {}

  /**
   * The routes table serving `ops`, each at its exact path only (Elysia's adapter folds a
   * trailing-slash key into the bare path, so the table cannot hold that form).
   */
  routes(ops: readonly Operation[]): BunRoutes {
    const table: BunRoutes = {};
    for (const op of ops) table[op.path] = { POST: this.serve(op) };
    return table;
  }

  /** One operation's handler: the whole pipeline, from request id to access log. */
  serve(op: Operation): Handler {
    // Compiled on the operation's first body: a start need not compile every schema.
    let validator: BodyValidator | undefined;
    const limitBytes = bodyLimitOf(op);
    const { errors, metrics, bodies, maxRequestsInFlight } = this.parts;
    return async (request, server) => {
      const info = newRequestInfo();
      let response: Response;
      try {
        admitRequest(server, maxRequestsInFlight);
        const preparing = this.parts.prepare?.(request, info);
        if (preparing !== undefined) await preparing;
        // The answer waits for the end of the turn anyway: an await more or less costs nothing.
        const body = await parseJsonBody(bodies, request, { limitBytes, info });
        (validator ??= new BodyValidator(op.body, op.path)).check(body);
        const result = await op.handle(body, request, info);
        metrics.observeResult(op.path, result);
        response = jsonTextResponse(envelopeJson(info.requestId, result), 200, info.requestId);
      } catch (error) {
        response = errors.render(error, "UNKNOWN", request, info.requestId);
      }
      await this.turnEnd.next();
      this.parts.log({ request, route: op.path, status: response.status, info });
      return response;
    };
  }
}
