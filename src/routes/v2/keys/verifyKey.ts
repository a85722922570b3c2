/** `POST /v2/keys.verifyKey`: verify a key. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { HOT_BODY_LIMIT_BYTES, operation } from "../../../http/operation.ts";
import { Int, MAX_SAFE_INT, RatelimitDurationMs, strictObject } from "../../../http/schemas.ts";
import { VERIFICATION_CODES } from "../../../services/verification/index.ts";
import type { RouteDeps } from "../../deps.ts";
import { documented } from "../../../http/responses.ts";

const VerifyKeyBody = strictObject({
  key: t.String({ minLength: 1, maxLength: 512, description: "The end-user key" }),
  tags: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 512 }), { maxItems: 20, description: "Up to 20 tags recorded with the verification for analytics" })),
  permissions: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: "Permission query: names, AND, OR, parentheses" })),
  credits: t.Optional(strictObject({ cost: Int({ minimum: 0, maximum: 1_000_000_000_000, description: "Credits to spend (default 1); 0 checks without spending" }) }, "Credit spend of this verification")),
  ratelimits: t.Optional(t.Array(strictObject({
    name: t.String({ minLength: 1, maxLength: 255, description: "Name of a limit of the key or its identity, or of an ad-hoc limit" }),
    cost: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT, description: "Units this request consumes (default 1)" })),
    limit: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT, description: "Requests per window, for an ad-hoc limit or to override the stored one" })),
    duration: t.Optional(RatelimitDurationMs("Window length in milliseconds, 1000 to 2592000000 (30 days), with `limit`")),
  }), { maxItems: 50, description: "Rate limits to apply; all pass or none is charged" })),
});

/**
 * The codes tollgate answers, plus upstream's FORBIDDEN (an IP allow-list refusal): tollgate has no
 * allow-lists and never answers it, but a client written against upstream's enum stays exhaustive.
 */
const DOCUMENTED_CODES: Record<string, string> = {
  ...VERIFICATION_CODES,
  FORBIDDEN: "Never answered by tollgate. Upstream answers it when the API's IP allow-list refuses the client; tollgate has no allow-lists.",
};
const CODES = Object.keys(DOCUMENTED_CODES);

/** `code` as a plain enum, each value's meaning in the description and in `x-enumDescriptions` (which Scalar shows). */
const VerificationCode = t.Unsafe<keyof typeof VERIFICATION_CODES>({
  type: "string",
  enum: CODES,
  description: `The outcome. The checks run in the order listed after \`VALID\`, and the first that fails gives the code:\n${CODES.map((c) => `- \`${c}\`: ${DOCUMENTED_CODES[c]}`).join("\n")}`,
  "x-enumDescriptions": DOCUMENTED_CODES,
});

const VerifyKeyData = t.Object({
  valid: t.Boolean({ description: "Whether the key passed every check (`code` is `VALID`)" }),
  code: VerificationCode,
  keyId: t.Optional(t.String({ description: "The key's id; absent when no key of the workspace matched" })),
  name: t.Optional(t.String({ description: "The key's name" })),
  meta: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The key's meta" })),
  expires: t.Optional(t.Integer({ description: "When the key expires (Unix ms)" })),
  credits: t.Optional(t.Integer({ description: "Credits left after this verification; absent for an unlimited key" })),
  enabled: t.Optional(t.Boolean({ description: "Whether the key is enabled" })),
  permissions: t.Optional(t.Array(t.String(), { description: "Every permission the key holds, its roles' included" })),
  roles: t.Optional(t.Array(t.String(), { description: "The key's roles" })),
  identity: t.Optional(t.Object({
    id: t.String({ description: "Identity id (`id_…`)" }),
    externalId: t.String({ description: "Your identifier of the owner" }),
    meta: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The identity's meta" })),
  }, { description: "The identity the key belongs to" })),
  ratelimits: t.Optional(t.Array(t.Object({
    id: t.String({ description: "Id of the limit (`rl_…`)" }),
    name: t.String({ description: "Name of the limit" }),
    limit: t.Integer({ description: "Requests allowed per window" }),
    remaining: t.Integer({ description: "What is left in this window" }),
    reset: t.Integer({ description: "End of the current window (Unix ms)" }),
    exceeded: t.Boolean({ description: "Whether this limit denied the request" }),
    duration: t.Integer({ description: "Window length in milliseconds" }),
    autoApply: t.Boolean({ description: "Whether every verification applies it" }),
  }), { description: "The state of each limit applied" })),
});

export const verifyKeyRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.verifyKey",
  example: {key: "sk_1234abcdef", permissions: "documents.read AND documents.write"},
  body: VerifyKeyBody,
  bodyLimitBytes: HOT_BODY_LIMIT_BYTES,
  detail: {
    summary: "Verify a key", tags: ["keys"], description: "Always 200 with `valid` and `code` for a well-formed request.",
    ...documented({ data: VerifyKeyData, errors: ["permissions_query_syntax_error", "precondition_failed", "service_unavailable"], permissionChecked: false }),
  },
  handle: async (body, request, info) => ok(await deps.services.verification.verifyKey(deps.principal(request, info), body)),
});
