/**
 * The one catalogue of error kinds: name → URN, HTTP status, title, and for the docs page and the
 * API reference its cause and what to do about it.
 * The `type` URL of an error is derived from its URN (see `errorTypePath`).
 */
export interface ErrorKind {
  urn: string;
  status: number;
  title: string;
  /** Why the service answers this: shown on the error's docs page and in the API reference. */
  cause: string;
  /** What the client (or an operator) does about it. */
  remedy: string;
}

const kind = (urn: string, status: number, title: string, cause: string, remedy: string): ErrorKind => ({ urn, status, title, cause, remedy });

export const ERROR_CATALOGUE = {
  invalid_input: kind("err:service:application:invalid_input", 400, "Bad Request",
    "The request body or a parameter failed validation: a field is missing, unknown, of the wrong type, or out of its bounds; or the `Authorization: Bearer <root key>` header is missing.",
    "Fix each field `errors[]` names (`location`, `message`, sometimes `fix`); the API reference lists every field's bounds. Send the header `Authorization: Bearer <root key>` with every operation but liveness and readiness."),
  request_body_unreadable: kind("err:user:bad_request:request_body_unreadable", 400, "Bad Request",
    "The request body is not valid JSON.",
    "Send one JSON object (or array, where the operation takes one), encoded as UTF-8."),
  request_body_too_large: kind("err:user:bad_request:request_body_too_large", 413, "Request Entity Too Large",
    "The request body is larger than the route accepts: 10 MiB, or 1 MiB for `keys.verifyKey` and `ratelimit(s).limit`. The detail gives the limit.",
    "Send a smaller body: split a large `meta` or a long list over several requests."),
  request_timeout: kind("err:user:bad_request:request_timeout", 408, "Request Timeout",
    "The request took too long to arrive or to process.",
    "Send the whole body promptly; on a slow link, retry with a smaller body."),
  client_closed_request: kind("err:user:bad_request:client_closed_request", 499, "Client Closed Request",
    "The client closed the connection before its request was read; nobody receives this answer, the access log records it.",
    "Nothing to do on the service's side; check the client's own timeout if it happens often."),
  permissions_query_syntax_error: kind("err:user:bad_request:permissions_query_syntax_error", 400, "Bad Request",
    "The `permissions` query of a verification could not be parsed. The detail gives the position.",
    "Write the query as permission names joined by `AND` and `OR`, grouped with parentheses, e.g. `a.read AND (b.write OR c.admin)`."),
  invalid_analytics_query: kind("err:user:bad_request:invalid_analytics_query", 400, "Bad Request",
    "The analytics query is not valid SQL of the supported dialect, or names an unknown column.",
    "Correct the query at the position the detail gives, using the columns of the public analytics tables."),
  invalid_analytics_table: kind("err:user:bad_request:invalid_analytics_table", 400, "Bad Request",
    "The analytics query reads a table that is not one of the public analytics tables.",
    "Read only the public tables, e.g. `key_verifications_v1` or its per-minute, hour, day and month rollups."),
  invalid_analytics_function: kind("err:user:bad_request:invalid_analytics_function", 400, "Bad Request",
    "The analytics query calls a function outside the allowed list.",
    "Use only the allowed aggregate, date and string functions; the detail names the one refused."),
  invalid_analytics_query_type: kind("err:user:bad_request:invalid_analytics_query_type", 400, "Bad Request",
    "The analytics query is not exactly one SELECT statement.",
    "Send a single SELECT, without a trailing second statement and without writing statements."),
  query_range_exceeds_retention: kind("err:user:bad_request:query_range_exceeds_retention", 400, "Bad Request",
    "The analytics query reaches further back than the data is kept.",
    "Bound the query's time range to the retention period, or read a coarser rollup that is kept longer."),
  query_execution_timeout: kind("err:user:unprocessable_entity:query_execution_timeout", 422, "Unprocessable Entity",
    "The analytics query ran longer than the time limit.",
    "Narrow the time range, read a rollup table instead of the raw events, or group by fewer columns."),
  query_memory_limit_exceeded: kind("err:user:unprocessable_entity:query_memory_limit_exceeded", 422, "Unprocessable Entity",
    "The analytics query needed more memory or produced a larger result than allowed.",
    "Aggregate more (fewer groups), select fewer columns, or add a `LIMIT`."),
  query_rows_limit_exceeded: kind("err:user:unprocessable_entity:query_rows_limit_exceeded", 422, "Unprocessable Entity",
    "The analytics query produced more rows than allowed.",
    "Add a `LIMIT`, or aggregate the rows with `GROUP BY`."),
  query_quota_exceeded: kind("err:user:too_many_requests:query_quota_exceeded", 429, "Too Many Requests",
    "The workspace has as many analytics queries running and waiting as it may, or the query waited too long for a free query process.",
    "Retry after the seconds in `Retry-After`; run fewer analytics queries at once."),
  workspace_rate_limited: kind("err:user:too_many_requests:workspace_rate_limited", 429, "Too Many Requests",
    "The workspace sent more requests than its limit allows.",
    "Retry after the seconds in `Retry-After`, and spread the requests out."),
  workspace_quota_exceeded: kind("err:user:too_many_requests:workspace_quota_exceeded", 429, "Too Many Requests",
    "The request would take the workspace past one of its quotas (keys, identities, permissions, roles, rate-limit namespaces or bytes of records). The detail names the quota, its limit and the variable that sets it; nothing of the request was applied.",
    "Delete records the workspace no longer needs (deleting frees room at once), or ask the operator to raise the variable the detail names."),
  route_not_found: kind("err:user:not_found:route_not_found", 404, "Not Found",
    "No route answers this method and path.",
    "Check the path against the API reference: every operation is `POST /v2/<resource>.<operation>`."),
  method_not_allowed: kind("err:user:method_not_allowed:method_not_allowed", 405, "Method Not Allowed",
    "The path exists but does not answer this method.",
    "Use a method the `Allow` header lists: every operation is `POST /v2/<resource>.<operation>`; `/v2/liveness` and `/v2/readiness` are `GET`."),
  misdirected_request: kind("err:user:misdirected_request:misdirected_request", 421, "Misdirected Request",
    "`/metrics` and the console answer only under a Host that is an IP address, `localhost`, or a name in `TOLLGATE_ALLOWED_HOSTS`, so that a web page served under another name cannot read them through a local browser (DNS rebinding).",
    "Reach them by IP address or `localhost`, or have the operator add the name you use to `TOLLGATE_ALLOWED_HOSTS`."),
  authentication_malformed: kind("err:service:authentication:malformed", 400, "Bad Request",
    "The `Authorization` header is not of the form `Bearer <root key>`.",
    "Send `Authorization: Bearer ` followed by the root key, with one space and nothing else."),
  root_key_not_found: kind("err:service:authentication:key_not_found", 401, "Unauthorized",
    "The root key is unknown or has been revoked.",
    "Check that the whole root key was sent; an operator makes a new one with `tollgate root-key create`."),
  insufficient_permissions: kind("err:service:authorization:insufficient_permissions", 403, "Insufficient Permissions",
    "The root key lacks a permission this operation needs. The detail names it.",
    "Use a root key that holds the permission the detail names, or have an operator make one that does."),
  forbidden: kind("err:service:authorization:forbidden", 403, "Forbidden",
    "The root key may not be used, for example because it has expired.",
    "Use another root key; an operator makes a new one with `tollgate root-key create`."),
  key_disabled: kind("err:service:authorization:key_disabled", 403, "Key is disabled",
    "The root key is disabled.",
    "Use another root key of the workspace; an operator makes one with `tollgate root-key create`."),
  workspace_disabled: kind("err:service:authorization:workspace_disabled", 403, "Workspace is disabled",
    "The workspace of the root key is disabled.",
    "Ask the operator of this tollgate: no root key of a disabled workspace is accepted until it is enabled again."),
  key_not_found: kind("err:service:data:key_not_found", 404, "Not Found",
    "The key does not exist, has been deleted, or belongs to another workspace.",
    "Check the `keyId`, and that the root key belongs to the key's workspace."),
  workspace_not_found: kind("err:service:data:workspace_not_found", 404, "Not Found",
    "The workspace does not exist.",
    "Check the workspace's id or name (`tollgate workspace list`)."),
  api_not_found: kind("err:service:data:api_not_found", 404, "Not Found",
    "The API does not exist, has been deleted, or belongs to another workspace.",
    "Check the `apiId`, and that the root key belongs to the API's workspace."),
  key_space_not_found: kind("err:service:data:key_space_not_found", 404, "Not Found",
    "The key space of the key's API does not exist.",
    "The key's API has lost its key space; create a new key in a live API instead."),
  permission_not_found: kind("err:service:data:permission_not_found", 404, "Not Found",
    "The permission does not exist in this workspace.",
    "Check the permission's id or slug, or create it first with `permissions.createPermission`."),
  role_not_found: kind("err:service:data:role_not_found", 404, "Not Found",
    "The role does not exist in this workspace.",
    "Create the role first with `permissions.createRole`: roles must exist before they are assigned."),
  identity_not_found: kind("err:service:data:identity_not_found", 404, "Not Found",
    "The identity does not exist or has been deleted.",
    "Check the identity's id or `externalId`, or create it with `identities.createIdentity`."),
  ratelimit_namespace_not_found: kind("err:service:data:ratelimit_namespace_not_found", 404, "Not Found",
    "The rate-limit namespace does not exist.",
    "Check the namespace's name or id; a namespace is created by its first `ratelimit.limit`."),
  ratelimit_override_not_found: kind("err:service:data:ratelimit_override_not_found", 404, "Not Found",
    "No override matches this namespace and identifier.",
    "Check the identifier (exactly as set, wildcards included), or list the namespace's overrides."),
  audit_log_not_found: kind("err:service:data:audit_log_not_found", 404, "Not Found",
    "The audit log entry does not exist, has passed retention, or belongs to another workspace.",
    "Check the log id, or list the entries still kept with `audit.listLogs`."),
  ratelimit_namespace_gone: kind("err:service:data:ratelimit_namespace_gone", 410, "Resource Gone",
    "The rate-limit namespace has been deleted.",
    "Use another namespace name; a deleted namespace is not created again."),
  permission_already_exists: kind("err:service:data:permission_already_exists", 409, "Conflict",
    "A permission with this name or slug already exists in the workspace (names compare case-insensitively).",
    "Use the existing permission, or choose another name and slug."),
  role_already_exists: kind("err:service:data:role_already_exists", 409, "Conflict",
    "A role with this name already exists in the workspace.",
    "Use the existing role, or choose another name."),
  identity_already_exists: kind("err:service:data:identity_already_exists", 409, "Conflict",
    "An identity with this externalId already exists in the workspace.",
    "Use the existing identity (`identities.getIdentity`), or choose another `externalId`."),
  analytics_not_configured: kind("err:service:data:analytics_not_configured", 412, "Precondition Failed",
    "Analytics queries are not enabled for this workspace.",
    "An operator enables them with `tollgate workspace update <id> --analytics on`."),
  analytics_connection_failed: kind("err:service:data:analytics_connection_failed", 503, "Service Unavailable",
    "The analytics store could not be read, or the process that runs the query failed.",
    "Try again; if it persists, an operator looks for the cause in the service's log."),
  protected_resource: kind("err:service:application:protected_resource", 412, "Resource is protected",
    "The resource has delete protection enabled.",
    "Turn its delete protection off first, then delete it."),
  precondition_failed: kind("err:service:application:precondition_failed", 412, "Precondition Failed",
    "A precondition of the operation does not hold; the detail says which.",
    "Establish what the detail names (e.g. create the named rate limit, enable key encryption), then retry."),
  unexpected_error: kind("err:service:application:unexpected_error", 500, "Internal Server Error",
    "Something went wrong inside the service.",
    "Retry; if it persists, report it with the request id: the service's log holds the cause under that id."),
  overloaded: kind("err:service:application:overloaded", 503, "Service Unavailable",
    "The service is answering as many requests at once as it accepts, or holds as many request-body bytes as it accepts.",
    "Retry after the seconds given in the `Retry-After` header; an operator raises the bounds if it happens under normal load."),
  not_ready: kind("err:service:application:not_ready", 503, "Service Unavailable",
    "A readiness check failed; the detail names which: a database (tollgate.db or analytics.db) that cannot be written, for example a read-only file or file system, or whose migrations are not those of this version; on a cluster node, which has no database file, PostgreSQL or Redis not answering within 1 s, or PostgreSQL's migrations not those of this version.",
    "Fix the cause the detail names; a load balancer sends no traffic here meanwhile."),
  service_unavailable: kind("err:service:application:service_unavailable", 500, "Internal Server Error",
    "The service cannot handle the request right now, for example while it shuts down, while its database stays locked by another connection, or, on a cluster node, while PostgreSQL or Redis cannot be reached (the detail names which).",
    "Retry shortly; nothing of the failed request was applied, unless the connection was lost while a change or a credit spend was being committed: then, as with any database, it may have been."),
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Exceptions to the derived type path, fixed by the spec. */
const TYPE_PATH_OVERRIDES: Partial<Record<ErrorCode, string>> = {
  permission_already_exists: "service/data/permission/duplicate",
};

/** `<system>/<category>/<specific>` for the error's `type` URL (under `{docs_url}/api-reference/errors-v2/`). */
export function errorTypePath(code: ErrorCode): string {
  const override = TYPE_PATH_OVERRIDES[code];
  if (override) return override;
  return ERROR_CATALOGUE[code].urn.replace(/^err:/, "").split(":").join("/");
}

/** The catalogue entry whose type path is `path`, for the docs pages. */
export function errorCodeByTypePath(path: string): ErrorCode | undefined {
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).find((code) => errorTypePath(code) === path);
}
