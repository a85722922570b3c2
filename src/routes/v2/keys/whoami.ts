/** `POST /v2/keys.whoami`: look up a key by its plaintext. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { KeyData } from "../../../http/views.ts";

export const whoamiRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.whoami",
  example: {key: "sk_1234abcdef"},
  body: strictObject({
    key: t.String({ minLength: 1, maxLength: 512, description: "The end-user key, including its prefix" }),
  }),
  detail: {
    summary: "Look up a key by its plaintext", tags: ["keys"], description: "Needs `read_key` on the key's API (403 without it). A key of another workspace is not found (404).",
    ...documented({ data: KeyData, errors: ["key_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.whoami(deps.principal(request, info), body)),
});
