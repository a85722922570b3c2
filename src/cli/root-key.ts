/** `tollgate root-key create|list|revoke`. */
import { ALL_GRANTS, isValidGrant, type Actor } from "../services/auth/index.ts";
import { instantFlag, parse, requireString } from "./args.ts";
import { JSON_FLAG, printList } from "./output.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import type { ServicesCommand } from "./scope.ts";

export const ROOT_KEY_HELP = `tollgate root-key create --workspace <id|name> --name <name> --permission <p> [--permission <p> ...] [--expires <when>]
                                      prints the root key (shown only once); --expires takes 30d, 12h,
                                      an ISO date or Unix ms
tollgate root-key list --workspace <id|name> [--json]   a header, then one key a line: id, name, start, state, permissions
tollgate root-key revoke <root key id>`;

/** `<resource>.<action>` pairs that exist; a typo in either would create a key that silently lacks the permission. */
const KNOWN_ACTIONS = new Set(ALL_GRANTS.map((g) => g.replace(/\.[^.]+\./, ".")));

function isKnownGrant(grant: string): boolean {
  if (!isValidGrant(grant)) return false;
  const [resource, , action] = grant.split(".");
  return KNOWN_ACTIONS.has(`${resource === "apis" ? "api" : resource}.${action}`);
}

/**
 * Parses and checks `args` before anything touches the data dir (a usage error creates nothing), and
 * returns the step that runs over the services.
 */
export function rootKeyCommand(args: string[], actor: Actor, io: CliIo): ServicesCommand {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const { values } = parse(rest, {
      workspace: { type: "string" }, name: { type: "string" }, permission: { type: "string", multiple: true }, expires: { type: "string" },
    });
    const workspace = requireString(values, "workspace");
    const name = requireString(values, "name");
    const permissions = (values.permission as string[] | undefined) ?? [];
    if (permissions.length === 0) throw new UsageError("at least one --permission is required");
    const bad = permissions.filter((p) => !isKnownGrant(p));
    if (bad.length > 0) throw new UsageError(`--permission must be <resource>.<id|*>.<action> with a known resource and action (e.g. api.*.create_api), got: ${bad.join(", ")}`);
    const nowMs = Date.now();
    const expiresAt = typeof values.expires === "string" ? instantFlag("expires", values.expires, nowMs, 1) : undefined;
    // A past value is almost always seconds given for milliseconds; it would create a dead key.
    if (expiresAt !== undefined && expiresAt <= nowMs) throw new UsageError(`--expires ${values.expires} is in the past; digits alone are Unix milliseconds`);
    return async (services) => {
      const created = await services.workspaces.createRootKey({
        workspace, name, permissions, ...(expiresAt !== undefined ? { expiresAt } : {}),
      }, actor);
      io.stdout(created.key);
      return EXIT.ok;
    };
  }
  if (sub === "list") {
    const { values } = parse(rest, { workspace: { type: "string" }, ...JSON_FLAG });
    const workspace = requireString(values, "workspace");
    return async (services) => {
      const nowMs = Date.now();
      const keys = (await services.workspaces.listRootKeys(workspace)).map((k) => ({
        ...k, state: k.revokedAt !== null ? "revoked" : k.expiresAt !== null && k.expiresAt <= nowMs ? "expired" : "active",
      }));
      printList(io, values.json === true, keys, [
        ["ID", (k) => k.id], ["NAME", (k) => k.name], ["START", (k) => `${k.start}…`], ["STATE", (k) => k.state], ["PERMISSIONS", (k) => k.permissions.join(",")],
      ]);
      return EXIT.ok;
    };
  }
  if (sub === "revoke") {
    const { positionals } = parse(rest, {});
    const id = positionals[0];
    if (!id || positionals.length > 1) throw new UsageError("root-key revoke takes exactly one <root key id>");
    return async (services) => {
      await services.workspaces.revokeRootKey(id, actor);
      io.stdout(`revoked ${id}`);
      return EXIT.ok;
    };
  }
  throw new UsageError(sub ? `unknown root-key command '${sub}'` : "root-key needs a command: create, list or revoke");
}
