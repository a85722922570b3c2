/** `tollgate workspace create|list|update`. */
import type { Actor } from "../services/auth/index.ts";
import { parse, requireString } from "./args.ts";
import type { ServicesCommand } from "./scope.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import { JSON_FLAG, printList, printOne, type Columns } from "./output.ts";

export const WORKSPACE_HELP = `tollgate workspace create --name <name> [--analytics]   prints the workspace id
tollgate workspace list [--json]                         a header, then one workspace a line: id, name, analytics
tollgate workspace update <id|name> --analytics on|off [--json]
                                      whether the workspace's root keys may query analytics (its
                                      verifications are recorded either way while TOLLGATE_ANALYTICS=on)`;

const WORKSPACE_COLUMNS: Columns<{ id: string; name: string; analyticsEnabled: boolean }> = [
  ["ID", (ws) => ws.id], ["NAME", (ws) => ws.name], ["ANALYTICS", (ws) => ws.analyticsEnabled ? "on" : "off"],
];

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
      printList(io, values.json === true, await services.workspaces.list(), WORKSPACE_COLUMNS);
      return EXIT.ok;
    };
  }
  if (sub === "update") {
    const { values, positionals } = parse(rest, { analytics: { type: "string" }, ...JSON_FLAG });
    const target = positionals[0];
    if (!target || positionals.length > 1) throw new UsageError("workspace update takes exactly one <id|name>");
    const analytics = requireString(values, "analytics");
    if (analytics !== "on" && analytics !== "off") throw new UsageError("--analytics must be on or off");
    return async (services) => {
      const ws = await services.workspaces.setAnalytics(target, analytics === "on", actor);
      printOne(io, values.json === true, ws, WORKSPACE_COLUMNS);
      return EXIT.ok;
    };
  }
  throw new UsageError(sub ? `unknown workspace command '${sub}'` : "workspace needs a command: create, list or update");
}
