/** `POST /v2/keys.getKey`: get a key. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { KeyId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { KeyData } from "../../../http/views.ts";

export const getKeyRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.getKey",
  example: {keyId: "key_1234"},
  body: strictObject({
    keyId: KeyId,
    decrypt: t.Optional(t.Boolean({ description: "Return the plaintext of a recoverable key (needs `decrypt_key`)" })),
  }),
  detail: {
    summary: "Get a key", tags: ["keys"], description: "Needs `read_key` on the key's API.",
    ...documented({ data: KeyData, errors: ["key_not_found", "precondition_failed"] }),
  },
  handle: async (body, request, info) => {
    const principal = deps.principal(request, info);
    return ok(await deps.services.keys.getKey(principal, body));
  },
});
