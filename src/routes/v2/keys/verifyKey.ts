import { Elysia, t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { Int, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";

export const verifyKeyRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/keys.verifyKey", async ({ body, request }) => ok(await deps.services.verification.verifyKey(deps.principal(request), body)), {
    body: strictObject({
      key: t.String({ minLength: 1, maxLength: 512, description: "The end-user key" }),
      tags: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 512 }), { maxItems: 20 })),
      permissions: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: "Permission query: names, AND, OR, parentheses" })),
      credits: t.Optional(strictObject({ cost: Int({ minimum: 0, maximum: 1_000_000_000_000 }) })),
      ratelimits: t.Optional(t.Array(strictObject({
        name: t.String({ minLength: 1, maxLength: 255 }),
        cost: t.Optional(Int({ minimum: 0 })),
        limit: t.Optional(Int({ minimum: 0 })),
        duration: t.Optional(Int({ minimum: 0 })),
      }), { maxItems: 50 })),
    }),
    detail: { summary: "Verify a key", tags: ["keys"], description: "Always 200 with `valid` and `code` for a well-formed request." },
  });
