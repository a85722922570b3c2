/** `POST /v2/keys.updateCredits`: change a key's credits. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { Int, KeyId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { CreditsData } from "../../../http/views.ts";

export const updateCreditsRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.updateCredits",
  example: {keyId: "key_1234", operation: "increment", value: 100},
  body: strictObject({
    keyId: KeyId,
    operation: t.Union([t.Literal("set"), t.Literal("increment"), t.Literal("decrement")], { description: "How `value` changes the remaining credits" }),
    value: t.Optional(t.Union([Int({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), t.Null()], {
      description: "Credits; with `set`, null or left out makes the key unlimited. Required for increment and decrement",
    })),
  }),
  detail: {
    summary: "Change a key's credits", tags: ["keys"], description: "Answers the credits afterwards. Needs `update_key` on the key's API.",
    ...documented({ data: CreditsData, errors: ["key_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.updateCredits(deps.principal(request, info), body)),
});
