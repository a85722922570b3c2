/** `POST /v2/identities.deleteIdentity`: delete an identity. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deleteIdentityRoute = (deps: RouteDeps) => operation({
  path: "/v2/identities.deleteIdentity",
  example: {identity: "user_1234"},
  body: strictObject({ identity: t.String({ minLength: 1, maxLength: 255, description: "The identity's id (`id_…`) or its externalId" }) }),
  detail: {
    summary: "Delete an identity", tags: ["identities"], description: "Soft delete: the externalId is free at once; keys keep working without the identity. Needs `identity.*.delete_identity`.",
    ...documented({ data: EmptyData, errors: ["identity_not_found"] }),
  },
  handle: (body, request, info) => ok(deps.services.identities.deleteIdentity(deps.principal(request, info), body)),
});
