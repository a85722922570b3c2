/** `POST /v2/identities.updateIdentity`: update an identity. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { metaObject, RatelimitConfigBody, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { IdentityData } from "../../../http/views.ts";

export const updateIdentityRoute = (deps: RouteDeps) => operation({
  path: "/v2/identities.updateIdentity",
  example: {identity: "user_1234", meta: {plan: "enterprise"}},
  body: strictObject({
    identity: t.String({ minLength: 1, maxLength: 255, description: "The identity's id (`id_…`) or its externalId" }),
    meta: t.Optional(metaObject("Replaces the metadata; `{}` clears it")),
    ratelimits: t.Optional(t.Array(RatelimitConfigBody, { maxItems: 50, description: "Replaces every limit, matched by name; `[]` clears them" })),
  }),
  detail: {
    summary: "Update an identity", tags: ["identities"], description: "Returns the identity as stored. Needs `identity.*.update_identity`.",
    ...documented({ data: IdentityData, errors: ["identity_not_found", "workspace_quota_exceeded"] }),
  },
  handle: (body, request, info) => ok(deps.services.identities.updateIdentity(deps.principal(request, info), body)),
});
