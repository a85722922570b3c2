import { Elysia, t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";

export const getVerificationsRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/analytics.getVerifications", async ({ body, request }) => ok(await deps.services.analytics.getVerifications(deps.principal(request), body)), {
    body: strictObject({
      query: t.String({
        minLength: 1,
        description: "One SELECT in the ClickHouse subset upstream documents, over key_verifications_v1 and key_verifications_per_{minute,hour,day,month}_v1; at most 16 KiB",
      }),
    }),
    detail: {
      summary: "Query verification analytics with SQL",
      tags: ["analytics"],
      description: "Needs the workspace's analytics opt-in and `api.*.read_analytics` (or `api.<apiId>.read_analytics`, which limits the rows to those APIs). At most 10,000 rows (a larger result is cut) and 5 s.",
    },
  });
