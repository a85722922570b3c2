/** `POST /v2/rootKeys.whoami`: a tollgate addition, so the console learns what the root key it holds may do. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";

const WhoamiData = t.Object({
  rootKeyId: t.String({ description: "The root key's id" }),
  name: t.String({ description: "The root key's name" }),
  workspace: t.Object({ id: t.String({ description: "Workspace id" }), name: t.String({ description: "Workspace name" }) }),
  permissions: t.Array(t.String(), { description: "The root key's grants, sorted" }),
  analytics: t.Object({
    recording: t.Boolean({ description: "Verifications are recorded (`TOLLGATE_ANALYTICS`)" }),
    querying: t.Boolean({ description: "The workspace opted in to analytics queries" }),
  }),
  quotas: t.Array(t.Object({
    quota: t.Union(["keys", "identities", "permissions", "roles", "namespaces", "storage"].map((q) => t.Literal(q)), { description: "The quota" }),
    variable: t.String({ description: "The variable that sets its limit, e.g. `TOLLGATE_WORKSPACE_MAX_KEYS`" }),
    used: t.Integer({ description: "What the workspace holds: live records, or for `storage` bytes of records" }),
    limit: t.Integer({ description: "The limit in force (bytes for `storage`)" }),
  }), { description: "The workspace's use of each quota; a create past one answers 429 `workspace_quota_exceeded`" }),
});

const DESCRIPTION = "A tollgate addition (upstream has no such route), used by the web console: answers the calling root key's id and name, "
  + "its workspace, its permissions (`apis.` grants also listed as `api.`) and whether analytics can show anything: `recording` is whether "
  + "verifications are recorded at all (`TOLLGATE_ANALYTICS`), `querying` whether the workspace opted in to analytics queries "
  + "(`tollgate workspace update <workspace> --analytics on`), and the workspace's use of each quota against its limit (`quotas`). "
  + "Any valid root key may call it; it needs no permission.";

export const rootKeysWhoamiRoute = (deps: RouteDeps) => operation({
  path: "/v2/rootKeys.whoami",
  example: {},
  body: t.Optional(strictObject({}, "`{}` or an empty body")),
  detail: { summary: "Describe the calling root key", tags: ["rootKeys"], description: DESCRIPTION, ...documented({ data: WhoamiData, permissionChecked: false }) },
  handle: async (_body, request, info) => ok(await deps.services.workspaces.whoami(deps.principal(request, info))),
});
