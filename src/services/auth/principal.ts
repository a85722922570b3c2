/** Who is acting, in terms services understand: no request, no framework. */
export interface Actor {
  type: "root_key" | "cli" | "system";
  id: string;
  name?: string;
  remoteIp?: string;
  userAgent?: string;
}

/** An authenticated root key: its workspace, its permissions and the actor to record in the audit log. */
export interface Principal {
  workspaceId: string;
  rootKeyId: string;
  /** Granted `<resource>.<id>.<action>` tuples; `apis.` grants are also stored as `api.`. */
  permissions: ReadonlySet<string>;
  actor: Actor;
}
