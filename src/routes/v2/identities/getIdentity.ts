/** `POST /v2/identities.getIdentity`: get an identity. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { IdentityData } from "../../../http/views.ts";

export const getIdentityRoute = (deps: RouteDeps) => operation({
  path: "/v2/identities.getIdentity",
  example: {identity: "user_1234"},
  body: strictObject({ identity: t.String({ minLength: 1, maxLength: 255, description: "The identity's id (`id_…`) or its externalId" }) }),
  detail: {
    summary: "Get an identity", tags: ["identities"], description: "Needs `identity.*.read_identity` or `identity.<id>.read_identity`.",
    ...documented({ data: IdentityData, errors: ["identity_not_found"] }),
  },
  handle: (body, request, info) => ok(deps.services.identities.getIdentity(deps.principal(request, info), body)),
});
