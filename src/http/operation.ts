/**
 * One v2 operation, declared once: its path, body schema, body limit, handler and OpenAPI
 * `detail` (summary, tags, description, `documented(...)` responses). The pipeline
 * (pipeline.ts) serves it and its entry in the API document is derived from the same declaration
 * (`documentedPaths`), shaped as Elysia's swagger plugin shapes a route with a `body`, so the
 * document reads as it did when each operation was also an Elysia route.
 *
 * The body limit is 10 MiB as upstream unless the operation declares less: it is enforced and
 * shown in the document (`x-max-body-bytes`) from the one number. Only the hot operations declare
 * less; smaller limits elsewhere would bound nothing (any valid root key may send 10 MiB to
 * keys.createKey), and what bounds all bodies together is the body budget (body-reader.ts).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { DocumentDecoration } from "elysia";
import type { Ok } from "./envelope.ts";
import type { RequestInfo } from "./request-context.ts";

const MiB = 1024 * 1024;

export const DEFAULT_BODY_LIMIT_BYTES = 10 * MiB;

/** The limit of keys.verifyKey and ratelimit(s).limit. */
export const HOT_BODY_LIMIT_BYTES = 1 * MiB;

export interface Operation<S extends TSchema = TSchema> {
  /** `POST` path, e.g. `/v2/keys.verifyKey`. */
  path: string;
  body: S;
  /**
   * A body that passes `body`, shown in the API document as the request's example: the reference
   * UI fills "Send" with it, and a schema alone would give `""` for a name that needs 3 characters.
   */
  example: Static<S>;
  /** The largest body the operation reads (default DEFAULT_BODY_LIMIT_BYTES). */
  bodyLimitBytes?: number;
  /** The OpenAPI operation's fields (summary, tags, description, responses). */
  detail: DocumentDecoration;
  /** Runs after the body passed `body`; throws AppError for a failure. Authenticates with `info` (RouteDeps.principal). */
  handle(body: Static<S>, request: Request, info: RequestInfo): Ok | Promise<Ok>;
}

/** Declares an operation, its handler's `body` typed from its schema. */
export function operation<S extends TSchema>(op: Operation<S>): Operation {
  return op as unknown as Operation;
}

export function bodyLimitOf(op: Operation): number {
  return op.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
}

/** The content types the document has always listed for a request body (the swagger plugin's default). */
const BODY_CONTENT_TYPES = ["application/json", "multipart/form-data", "text/plain"];

/** Elysia's swagger plugin's operation id: `post` and each capitalised path segment (`postV2Keys.verifyKey`). */
function operationId(path: string): string {
  return `post${path.split("/").map((segment) => segment.charAt(0).toUpperCase() + segment.slice(1)).join("")}`;
}

/** The OpenAPI `paths` entries of the operations. */
export function documentedPaths(ops: readonly Operation[]): Record<string, { post: Record<string, unknown> }> {
  const paths: Record<string, { post: Record<string, unknown> }> = {};
  for (const op of ops) {
    const limitBytes = bodyLimitOf(op);
    paths[op.path] = {
      post: {
        parameters: [],
        operationId: operationId(op.path),
        ...op.detail,
        ...(limitBytes === DEFAULT_BODY_LIMIT_BYTES ? {} : { "x-max-body-bytes": limitBytes }),
        requestBody: { required: true, content: Object.fromEntries(BODY_CONTENT_TYPES.map((type) => [type, { schema: op.body, ...(type === "application/json" ? { example: op.example } : {}) }])) },
      },
    };
  }
  return paths;
}
