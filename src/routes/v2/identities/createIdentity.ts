/** `POST /v2/identities.createIdentity`: create an identity. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { ExternalId, metaObject, RatelimitConfigBody, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";

export const createIdentityRoute = (deps: RouteDeps) => operation({
  path: "/v2/identities.createIdentity",
  example: {externalId: "user_1234", meta: {plan: "pro"}},
  body: strictObject({
    externalId: ExternalId,
    meta: t.Optional(metaObject("Returned with every verification of the identity's keys")),
    ratelimits: t.Optional(t.Array(RatelimitConfigBody, { maxItems: 50, description: "Limits shared by every key of the identity; names unique" })),
  }),
  detail: {
    summary: "Create an identity", tags: ["identities"], description: "A live identity with the same externalId is 409. Needs `identity.*.create_identity`.",
    ...documented({ data: t.Object({ identityId: t.String({ description: "The new identity's id (`id_…`)" }) }), errors: ["identity_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: (body, request, info) => ok(deps.services.identities.createIdentity(deps.principal(request, info), body)),
});
