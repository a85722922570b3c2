/**
 * `POST /v1/keys.verifyKey` (TOLLGATE_V1_PATHS=on): upstream v1's request and bare answer over the
 * one verification (services/verification `verifyKeyOfItsWorkspace`). No root key, as upstream's
 * v1: the key's own workspace answers. Its body limit is the size up to which no root key is asked
 * for before the body is read (body-reader.ts): a v1 body is small, and one without a root key must
 * not make the service buffer more.
 */
import { t } from "elysia";
import { AppError, invalidInput } from "../../errors/app-error.ts";
import { EARLY_AUTH_BODY_BYTES } from "../../http/body-reader.ts";
import { Int, MAX_SAFE_INT, RatelimitDurationMs } from "../../http/schemas.ts";
import { v1Operation } from "../../http/v1.ts";
import { markHoldsRawJson, RawJson } from "../../lib/raw-json.ts";
import type { V1VerifyKeyResult, VerifyKeyInput } from "../../services/verification/index.ts";
import type { RouteDeps } from "../deps.ts";
import { v1QueryText } from "./permission-query.ts";

export const V1_VERIFY_KEY_PATH = "/v1/keys.verifyKey";

// Plain objects, not strict ones: upstream's v1 schema ignored fields it did not know.
const V1VerifyKeyBody = t.Object({
  key: t.String({ minLength: 1, maxLength: 512 }),
  apiId: t.Optional(t.String({ maxLength: 255 })),
  tags: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 512 }), { maxItems: 20 })),
  authorization: t.Optional(t.Object({ permissions: t.Unknown() })),
  remaining: t.Optional(t.Object({ cost: t.Optional(Int({ minimum: 0, maximum: 1_000_000_000_000 })) })),
  /** Deprecated upstream in favour of `ratelimits`: the cost of the key's `default` limit. */
  ratelimit: t.Optional(t.Object({ cost: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT })) })),
  ratelimits: t.Optional(t.Array(t.Object({
    name: t.String({ minLength: 1, maxLength: 255 }),
    cost: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT })),
    limit: t.Optional(Int({ minimum: 0, maximum: MAX_SAFE_INT })),
    duration: t.Optional(RatelimitDurationMs("Window length in milliseconds")),
  }), { maxItems: 50 })),
});

type Body = typeof V1VerifyKeyBody.static;

/** v2's input for a v1 body. */
function v2Input(body: Body): VerifyKeyInput {
  const input: VerifyKeyInput = { key: body.key };
  if (body.tags !== undefined) input.tags = body.tags;
  if (body.authorization !== undefined) input.permissions = v1QueryText(body.authorization.permissions);
  if (body.remaining !== undefined) input.credits = { cost: body.remaining.cost ?? 1 };
  if (body.ratelimits !== undefined) input.ratelimits = body.ratelimits;
  else if (body.ratelimit !== undefined) input.ratelimits = [{ name: "default", cost: body.ratelimit.cost ?? 1 }];
  return input;
}

/**
 * The one limit v1 reports: the one that denied, else the key's `default`, else the first applied.
 * v1 had one limit per key; v2's `ratelimits` array has every one applied.
 */
function reported(result: V1VerifyKeyResult): { limit: number; remaining: number; reset: number } | undefined {
  const states = result.ratelimits;
  if (states === undefined || states.length === 0) return undefined;
  const state = states.find((s) => s.exceeded) ?? states.find((s) => s.name === "default") ?? states[0]!;
  return { limit: state.limit, remaining: state.remaining, reset: state.reset };
}

/** Upstream v1's bare answer: NOT_FOUND alone, else the key's fields; `ownerId` is the identity's externalId (v1's owner became v2's identity). */
export function v1Answer(result: V1VerifyKeyResult, requestId: string): object {
  if (result.code === "NOT_FOUND") return { valid: false, code: "NOT_FOUND", requestId };
  const answer = {
    keyId: result.keyId,
    valid: result.valid,
    name: result.name,
    ownerId: result.identity?.externalId,
    meta: result.meta,
    expires: result.expires,
    remaining: result.credits,
    ratelimit: reported(result),
    enabled: result.enabled,
    permissions: result.permissions ?? [],
    roles: result.roles ?? [],
    code: result.code,
    identity: result.identity ? { id: result.identity.id, externalId: result.identity.externalId, meta: result.identity.meta ?? {} } : undefined,
    requestId,
  };
  // A large meta stays text (lib/raw-json.ts): the answer is marked as the verification's was.
  return answer.meta instanceof RawJson || answer.identity?.meta instanceof RawJson ? markHoldsRawJson(answer) : answer;
}

export const v1VerifyKeyRoute = (deps: RouteDeps) => v1Operation({
  path: V1_VERIFY_KEY_PATH,
  body: V1VerifyKeyBody,
  bodyLimitBytes: EARLY_AUTH_BODY_BYTES,
  rootKey: false,
  decidesAs: "/v2/keys.verifyKey",
  handle: async (body, _request, info) => {
    try {
      const result = await deps.services.verification.verifyKeyOfItsWorkspace(v2Input(body), body.apiId);
      return v1Answer(result, info.requestId);
    } catch (error) {
      // The one 412 of a verification, a named limit the key lacks, was a 400 in upstream's v1.
      if (error instanceof AppError && error.code === "precondition_failed") throw invalidInput("body.ratelimits", error.detail);
      throw error;
    }
  },
});
