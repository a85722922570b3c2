/**
 * The responses of an operation in the OpenAPI document: the success envelope around the route's
 * `data` schema, and the error envelope under each status the route can give, described from the
 * error catalogue. An operation spreads `documented(...)` into its `detail` (http/operation.ts);
 * the document is all it is for: handlers return an `Ok` the pipeline wraps, and no answer is
 * validated against it.
 */
import { t, type DocumentDecoration } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { ERROR_CATALOGUE, errorTypePath, type ErrorCode } from "../errors/catalogue.ts";

/** What any request with a body can be answered, whatever the route does (on a cluster node, `service_unavailable` while PostgreSQL or Redis cannot be reached). */
const TRANSPORT_ERRORS: readonly ErrorCode[] = ["invalid_input", "request_body_unreadable", "request_timeout", "request_body_too_large", "overloaded", "service_unavailable", "unexpected_error"];

/** What authenticating the root key can answer (services/auth). */
const ROOT_KEY_ERRORS: readonly ErrorCode[] = ["invalid_input", "authentication_malformed", "root_key_not_found", "forbidden", "key_disabled", "workspace_disabled"];

/** The extension on each error response listing the catalogue codes behind its status. */
const ERROR_CODES_EXTENSION = "x-error-codes";

const RETRY_AFTER = { "Retry-After": { description: "Seconds after which a retry may succeed", schema: { type: "integer", minimum: 1 } } };

const ResponseMeta = t.Object({ requestId: t.String({ description: "This request's id (`req_…`): quote it when asking for help" }) });

const Pagination = t.Object({
  cursor: t.Optional(t.String({ description: "Pass as `cursor` to get the next page; absent on the last page. A page may hold fewer items than `limit` and still have a next page" })),
  hasMore: t.Boolean({ description: "Whether another page follows (a page ended by the byte budget can hold fewer items than `limit`)" }),
}, { description: "Where the next page starts" });

const FieldError = t.Object({
  location: t.String({ description: "The field, e.g. `body.credits.remaining`" }),
  message: t.String({ description: "What is wrong with it" }),
  fix: t.Optional(t.String({ description: "How to correct it, where known" })),
});

const errorEnvelope = (withFieldErrors: boolean) => t.Object({
  meta: ResponseMeta,
  error: t.Object({
    title: t.String({ description: "The status's short title" }),
    detail: t.String({ description: "What went wrong with this request" }),
    status: t.Integer({ description: "The HTTP status, repeated" }),
    type: t.String({ description: "URL of the page explaining this error: `<docs>/api-reference/errors-v2/<system>/<category>/<specific>`" }),
    ...(withFieldErrors ? { errors: t.Array(FieldError, { description: "Each field's problem (empty when the error concerns no field)" }) } : {}),
  }),
});

const ErrorEnvelope = errorEnvelope(false);
const ValidationErrorEnvelope = errorEnvelope(true);

export interface Documentation {
  /** The schema of `data` in a success. */
  data: TSchema;
  /** Whether the success carries `pagination` (a list page). */
  paged?: boolean;
  /** The codes this route adds to those every authenticated route can give. */
  errors?: readonly ErrorCode[];
  /** false for an operation that needs no root key (and so no permission). */
  rootKey?: boolean;
  /** false for an operation that authenticates the root key but checks no permission (keys.verifyKey). */
  permissionChecked?: boolean;
}

/** Every catalogue code an operation declares, in catalogue order. */
function declaredErrors(doc: Documentation): ErrorCode[] {
  const codes = new Set<ErrorCode>(doc.errors ?? []);
  if (doc.rootKey !== false) {
    for (const code of [...TRANSPORT_ERRORS, ...ROOT_KEY_ERRORS]) codes.add(code);
    if (doc.permissionChecked !== false) codes.add("insufficient_permissions");
  }
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => codes.has(code));
}

/** One line of an error response's description: the code, and its cause. */
const codeLine = (code: ErrorCode) => `- \`${code}\` (\`${ERROR_CATALOGUE[code].urn}\`): ${ERROR_CATALOGUE[code].cause}`;

function errorResponse(status: number, codes: readonly ErrorCode[]): Record<string, unknown> {
  const examples = Object.fromEntries(codes.map((code) => [code, {
    summary: code,
    value: {
      meta: { requestId: "req_4dgsCdnKtmJAb1Ve" },
      error: {
        title: ERROR_CATALOGUE[code].title,
        detail: ERROR_CATALOGUE[code].cause,
        status,
        type: `/docs/api-reference/errors-v2/${errorTypePath(code)}`,
        ...(status === 400 ? { errors: [] } : {}),
      },
    },
  }]));
  return {
    description: `${ERROR_CATALOGUE[codes[0]!].title}. One of:\n${codes.map(codeLine).join("\n")}\n\n`
      + "Sent as `application/problem+json` instead when the client accepts it (always for a 429). Each error's `type` page says what to do.",
    [ERROR_CODES_EXTENSION]: codes,
    ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
    content: { "application/json": { schema: status === 400 ? ValidationErrorEnvelope : ErrorEnvelope, examples } },
  };
}

type Responses = NonNullable<DocumentDecoration["responses"]>;

/** The `responses` of an operation's OpenAPI entry, to spread into its `detail`. */
export function documented(doc: Documentation): { responses: Responses } {
  const success = t.Object({ meta: ResponseMeta, data: doc.data, ...(doc.paged ? { pagination: Pagination } : {}) });
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of declaredErrors(doc)) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const errors = [...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [String(status), errorResponse(status, codes)]);
  return {
    responses: {
      200: { description: doc.paged ? "A page of the list" : "Success", content: { "application/json": { schema: success } } },
      ...Object.fromEntries(errors),
    } as Responses,
  };
}

/** `data: {}`: what an operation that changes something and has nothing to return answers. */
export const EmptyData = t.Object({}, { description: "Always empty" });
