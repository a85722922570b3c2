/** `tollgate workspace create|list|update`. */
import type { Actor } from "../services/auth/index.ts";
import { parse, requireString } from "./args.ts";
import type { ServicesCommand } from "./scope.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import { JSON_FLAG, printList } from "./output.ts";

export const WORKSPACE_HELP = `tollgate workspace create --name <name> [--analytics]   prints the workspace id
tollgate workspace list [--json]                         one workspace a line: id, name, analytics
tollgate workspace update <id|name> --analytics on|off
                                      whether the workspace's root keys may query analytics (its
                                      verifications are recorded either way while TOLLGATE_ANALYTICS=on)`;

/**
 * Parses and checks `args` before anything touches the data dir (a usage error creates nothing), and
 * returns the step that runs over the services.
 */
export function workspaceCommand(args: string[], actor: Actor, io: CliIo): ServicesCommand {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const { values } = parse(rest, { name: { type: "string" }, analytics: { type: "boolean" } });
    const name = requireString(values, "name");
    return async (services) => {
      const ws = await services.workspaces.create({ name, analyticsEnabled: values.analytics === true }, actor);
      io.stdout(ws.id);
      return EXIT.ok;
    };
  }
  if (sub === "list") {
    const { values } = parse(rest, JSON_FLAG);
    return async (services) => {
      printList(io, values.json === true, await services.workspaces.list(), (ws) => [ws.id, ws.name, `analytics=${ws.analyticsEnabled ? "on" : "off"}`]);
      return EXIT.ok;
    };
  }
  if (sub === "update") {
    const { values, positionals } = parse(rest, { analytics: { type: "string" } });
    const target = positionals[0];
    if (!target || positionals.length > 1) throw new UsageError("workspace update takes exactly one <id|name>");
    const analytics = requireString(values, "analytics");
    if (analytics !== "on" && analytics !== "off") throw new UsageError("--analytics must be on or off");
    return async (services) => {
      const ws = await services.workspaces.setAnalytics(target, analytics === "on", actor);
      io.stdout(`${ws.id}\t${ws.name}\tanalytics=${analytics}`);
      return EXIT.ok;
    };
  }
  throw new UsageError(sub ? `unknown workspace command '${sub}'` : "workspace needs a command: create, list or update");
}
