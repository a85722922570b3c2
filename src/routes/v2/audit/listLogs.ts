/** `POST /v2/audit.listLogs`: list audit log entries. */
import { t } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { Cursor, PageLimit, UnixMs, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf } from "../../../http/views.ts";
import { AuditLogData } from "./schemas.ts";

const Filter = (description: string) => t.String({ minLength: 1, maxLength: 255, description });

export const listLogsRoute = (deps: RouteDeps) => operation({
  path: "/v2/audit.listLogs",
  example: {limit: 100},
  body: strictObject({
    limit: t.Optional(PageLimit),
    cursor: t.Optional(Cursor),
    event: t.Optional(Filter("Only entries of this event, e.g. `key.create`")),
    actorId: t.Optional(Filter("Only entries made by this actor (root key id, or `cli`)")),
    resourceId: t.Optional(Filter("Only entries that name this record among their resources")),
    since: t.Optional(UnixMs("Only entries at or after this time (Unix ms)")),
    until: t.Optional(UnixMs("Only entries at or before this time (Unix ms)")),
  }),
  detail: {
    summary: "List audit log entries",
    tags: ["audit"],
    description: "Entries of the caller's workspace within retention, newest first, paginated. Needs `audit.*.read_log`.",
    ...documented({ data: ListOf(AuditLogData, "Entries, newest first"), paged: true }),
  },
  handle: async (body, request, info) => {
    const page = await deps.services.audit.listLogs(deps.principal(request, info), body);
    return okPage(page.items, page.cursor);
  },
});
