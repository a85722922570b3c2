/**
 * The one request pipeline every v2 operation runs through: request id → root key from the header
 * (a cluster node's lookup holding a slot of the unauthenticated share) → in-flight cap and shares
 * (in-flight.ts) → JSON body within its bounds (body-reader.ts) → schema validation → handler →
 * envelope, or the one error renderer → metrics → access log. A request whose root key fails is
 * answered at once, its body not waited for, and its connection closed: it holds nothing. Its 400
 * for the body still comes first when the body is already there, as when keys were checked last.
 * It is served straight from Bun's router (`routes`): Elysia's per-request hook chain costs a large
 * share of a bare Bun.serve's throughput, and the operations need none of it. Answers leave together at the end of the event-loop turn (see TurnEnd).
 */
import { parseJsonBody, parseJsonText } from "./body.ts";
import type { BodyRead, BodyReader } from "./body-reader.ts";
import type { InFlight, InFlightSlot } from "./in-flight.ts";
import { BodyValidator } from "./validation.ts";
import type { Ok } from "./envelope.ts";
import type { ErrorRenderer } from "./errors.ts";
import { jsonTextResponse } from "./json.ts";
import { jsonText } from "../lib/raw-json.ts";
import type { MetricsRegistry } from "./metrics.ts";
import type { AnsweredRequest } from "./access-log.ts";
import { newRequestInfo, type RequestInfo } from "./request-context.ts";
import { bodyLimitOf, type Operation } from "./operation.ts";
import type { Principal } from "../services/auth/index.ts";

export interface PipelineParts {
  errors: ErrorRenderer;
  metrics: MetricsRegistry;
  log(answered: AnsweredRequest): void;
  bodies: BodyReader;
  inFlight: InFlight<Server>;
  /** Work to wait for before a request is read (the cluster mode's root-key lookup); undefined when there is none. */
  prepare?(request: Request, info: RequestInfo): Promise<void> | undefined;
  /** The request's principal from its Authorization header, or the root key's 400/401/403 AppError. */
  authenticate(request: Request, info: RequestInfo): Principal;
}

/** What the pipeline asks of Bun's server: the client's address (in-flight.ts). */
export interface Server {
  requestIP(request: Request): { address: string } | null;
}

type Handler = (request: Request, server: Server) => Promise<Response>;

/** The `routes` table of Bun.serve: POST of each operation; other methods fall through to Elysia. */
export type BunRoutes = Record<string, { POST: Handler }>;

/**
 * The success envelope as JSON. Request ids are `req_` and base58, nothing to escape, so the
 * common case stringifies only `data` instead of building and walking the envelope object; a large
 * stored meta in it goes in as its text (lib/raw-json.ts).
 */
export function envelopeJson(requestId: string, result: Ok): string {
  if (result.data === undefined) return JSON.stringify({ meta: { requestId }, ...result.extra });
  const head = `{"meta":{"requestId":"${requestId}"},"data":${jsonText(result.data)}`;
  if (result.extra === undefined) return `${head}}`;
  // `extra` (a list page's `pagination`) after `data`, as an object spread of it would place it.
  const extra = Object.entries(result.extra).filter(([, value]) => value !== undefined);
  return `${head}${extra.map(([name, value]) => `,${JSON.stringify(name)}:${JSON.stringify(value)}`).join("")}}`;
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
    const { errors, metrics, bodies, inFlight } = this.parts;
    const validate = (body: unknown) => (validator ??= new BodyValidator(op.body, op.path)).check(body);
    return async (request, server) => {
      const info = newRequestInfo();
      let response: Response;
      let slot: InFlightSlot | undefined;
      try {
        const admitting = admitted(this.parts, request, server, { limitBytes, info }, validate);
        slot = admitting instanceof Promise ? await admitting : admitting;
        // The answer waits for the end of the turn anyway: an await more or less costs nothing.
        const body = await parseJsonBody(bodies, request, { limitBytes, info });
        validate(body);
        const result = await op.handle(body, request, info);
        metrics.observeResult(op.path, result);
        response = jsonTextResponse(envelopeJson(info.requestId, result), 200, info.requestId);
      } catch (error) {
        response = errors.render(error, "UNKNOWN", request, info.requestId);
      } finally {
        if (slot !== undefined) inFlight.release(slot);
      }
      await this.turnEnd.next();
      this.parts.log({ request, route: op.path, status: response.status, info });
      return response;
    };
  }
}

/**
 * The request's slot under the in-flight cap. When it `authenticates`, its root key is checked from
 * the header first (a cluster node's lookup holding a slot of the unauthenticated share meanwhile),
 * and a failure is thrown at once (see refuse) holding no slot. Synchronous unless there is a lookup
 * to wait for or a refusal to make, so the embedded hot path takes no extra turn of the microtasks.
 */
export function admitted(
  parts: PipelineParts, request: Request, server: Server, read: BodyRead, validate: (body: unknown) => void, authenticates = true,
): InFlightSlot | Promise<InFlightSlot> {
  if (!authenticates) return parts.inFlight.admit(request, server, true);
  const preparing = parts.prepare?.(request, read.info);
  if (preparing !== undefined) return admittedAfterLookup(preparing, parts, request, server, read, validate);
  try {
    read.info.principal = parts.authenticate(request, read.info);
  } catch (failure) {
    return refuse(parts.bodies, failure, request, read, validate);
  }
  return parts.inFlight.admit(request, server, true);
}

async function admittedAfterLookup(
  preparing: Promise<void>, parts: PipelineParts, request: Request, server: Server, read: BodyRead, validate: (body: unknown) => void,
): Promise<InFlightSlot> {
  const slot = parts.inFlight.admit(request, server, false);
  try {
    await preparing;
    try {
      read.info.principal = parts.authenticate(request, read.info);
    } catch (failure) {
      await refuse(parts.bodies, failure, request, read, validate);
    }
  } catch (error) {
    parts.inFlight.release(slot);
    throw error;
  }
  parts.inFlight.authenticated(slot);
  return slot;
}

/**
 * Throws the root key's `failure` without waiting for the body: the body's 400 comes first only
 * when the body is already there (body-reader.ts `arrivedText`).
 */
export async function refuse(bodies: BodyReader, failure: unknown, request: Request, read: BodyRead, validate: (body: unknown) => void): Promise<never> {
  const text = await bodies.arrivedText(request, read);
  if (text !== undefined) validate(parseJsonText(text));
  throw failure;
}
