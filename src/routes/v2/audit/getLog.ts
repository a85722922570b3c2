/** `POST /v2/audit.getLog`: get an audit log entry. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { IDENTIFIER_PATTERN, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { AuditLogData } from "./schemas.ts";

export const getLogRoute = (deps: RouteDeps) => operation({
  path: "/v2/audit.getLog",
  example: {logId: "log_1234"},
  body: strictObject({
    logId: t.String({ minLength: 3, maxLength: 255, pattern: IDENTIFIER_PATTERN, description: "Audit log entry identifier (`log_…`)" }),
  }),
  detail: {
    summary: "Get an audit log entry",
    tags: ["audit"],
    description: "One entry of the caller's workspace. A missing entry, one past retention or one of another workspace is 404 `audit_log_not_found`. Needs `audit.*.read_log`.",
    ...documented({ data: AuditLogData, errors: ["audit_log_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.audit.getLog(deps.principal(request, info), body)),
});
