/**
 * Serving v1's two hot paths (routes/v1, only under TOLLGATE_V1_PATHS=on): the pipeline's pieces
 * (request id, root key from the header before the body, in-flight cap and shares, body within its
 * bounds, schema validation, turn end, metrics, access log) around a v1 operation, answered with v1's bare body or v1's error body
 * (`{error:{code, docs, message, requestId}}`, http/errors.ts renderV1), each with a `Deprecation`
 * header. A serve function of its own rather than an option of the pipeline's: v1 is a migration
 * aid, and v2's hot path should not test for it on every request.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { parseJsonBody } from "./body.ts";
import type { InFlightSlot } from "./in-flight.ts";
import { Ok } from "./envelope.ts";
import { jsonTextResponse } from "./json.ts";
import { jsonText } from "../lib/raw-json.ts";
import { BodyValidator } from "./validation.ts";
import type { BunRoutes, PipelineParts } from "./pipeline.ts";
import { admitted, TurnEnd } from "./pipeline.ts";
import { newRequestInfo, type RequestInfo } from "./request-context.ts";

/**
 * RFC 9745's Deprecation header: a structured-field date, `@` and Unix seconds. v1 is deprecated
 * as of tollgate's first release (its v2 was the first API it served); 2024-01-01 is before it.
 */
export const V1_DEPRECATION = "@1704067200";

const V1_HEADERS = { deprecation: V1_DEPRECATION };

export interface V1Operation<S extends TSchema = TSchema> {
  /** `POST` path, e.g. `/v1/keys.verifyKey`. */
  path: string;
  body: S;
  bodyLimitBytes: number;
  /** Whether it authenticates a root key: one that does not (v1 verifyKey) never waits for a root-key lookup (`prepare`), whatever header the client sends. */
  rootKey: boolean;
  /** The v2 route whose decisions this one makes: its answers count in /metrics as that route's. */
  decidesAs: string;
  /** The bare body (a promise in the cluster mode); throws AppError for a failure. */
  handle(body: Static<S>, request: Request, info: RequestInfo): object | Promise<object>;
}

/** Declares a v1 operation, its handler's `body` typed from its schema. */
export function v1Operation<S extends TSchema>(op: V1Operation<S>): V1Operation {
  return op as unknown as V1Operation;
}

/** The routes table serving the v1 operations, to be merged into the pipeline's. */
export function v1Routes(parts: PipelineParts, ops: readonly V1Operation[]): BunRoutes {
  const turnEnd = new TurnEnd();
  const table: BunRoutes = {};
  for (const op of ops) table[op.path] = { POST: serveV1(parts, turnEnd, op) };
  return table;
}

function serveV1(parts: PipelineParts, turnEnd: TurnEnd, op: V1Operation): BunRoutes[string]["POST"] {
  let validator: BodyValidator | undefined;
  const { errors, metrics, bodies, inFlight } = parts;
  const validate = (body: unknown) => (validator ??= new BodyValidator(op.body, op.path)).check(body);
  const read = (info: RequestInfo) => ({ limitBytes: op.bodyLimitBytes, info });
  return async (request, server) => {
    const info = newRequestInfo();
    let response: Response;
    let slot: InFlightSlot | undefined;
    try {
      // As in the pipeline: the root key from its header before the body, a failure answered at once.
      slot = await admitted(parts, request, server, read(info), validate, op.rootKey);
      const body = await parseJsonBody(bodies, request, read(info));
      validate(body);
      const result = await op.handle(body, request, info);
      metrics.observeResult(op.decidesAs, new Ok(result));
      response = jsonTextResponse(jsonText(result), 200, info.requestId, V1_HEADERS);
    } catch (error) {
      response = errors.renderV1(error, request, info.requestId, V1_HEADERS);
    } finally {
      if (slot !== undefined) inFlight.release(slot);
    }
    await turnEnd.next();
    parts.log({ request, route: op.path, status: response.status, info });
    return response;
  };
}
