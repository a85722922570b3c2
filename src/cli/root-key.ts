/** `tollgate root-key create|list|revoke`. */
import type { Services } from "../services/index.ts";
import type { Actor } from "../services/auth/index.ts";
import { parse, requireString } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const ROOT_KEY_HELP = `tollgate root-key create --workspace <id|name> --name <name> --permission <p> [--permission <p> ...] [--expires <unix ms>]
                                      prints the root key (shown only once)
tollgate root-key list --workspace <id|name>   one key a line: id, name, start, state, permissions
tollgate root-key revoke <root key id>`;

export function rootKeyCommand(args: string[], services: Services, actor: Actor, io: CliIo): number {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const { values } = parse(rest, {
      workspace: { type: "string" }, name: { type: "string" }, permission: { type: "string", multiple: true }, expires: { type: "string" },
    });
    const permissions = (values.permission as string[] | undefined) ?? [];
    if (permissions.length === 0) throw new UsageError("at least one --permission is required");
    const expires = values.expires as string | undefined;
    if (expires !== undefined && !/^\d{1,15}$/.test(expires)) throw new UsageError("--expires must be Unix milliseconds");
    const created = services.workspaces.createRootKey({
      workspace: requireString(values, "workspace"), name: requireString(values, "name"), permissions,
      ...(expires !== undefined ? { expiresAt: Number(expires) } : {}),
    }, actor);
    io.stdout(created.key);
    return EXIT.ok;
  }
  if (sub === "list") {
    const { values } = parse(rest, { workspace: { type: "string" } });
    for (const k of services.workspaces.listRootKeys(requireString(values, "workspace"))) {
      const state = k.revokedAt !== null ? "revoked" : k.expiresAt !== null && k.expiresAt <= Date.now() ? "expired" : "active";
      io.stdout(`${k.id}\t${k.name}\t${k.start}…\t${state}\t${k.permissions.join(",")}`);
    }
    return EXIT.ok;
  }
  if (sub === "revoke") {
    const { positionals } = parse(rest, {});
    const id = positionals[0];
    if (!id || positionals.length > 1) throw new UsageError("root-key revoke takes exactly one <root key id>");
    services.workspaces.revokeRootKey(id, actor);
    io.stdout(`revoked ${id}`);
    return EXIT.ok;
  }
  throw new UsageError(sub ? `unknown root-key command '${sub}'` : "root-key needs a command: create, list or revoke");
}
