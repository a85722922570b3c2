/** `tollgate api list|create|delete`: a workspace's APIs, through the API service (audited as the CLI). */
import type { Services } from "../services/index.ts";
import type { Actor } from "../services/auth/index.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import { JSON_FLAG, printList } from "./output.ts";
import { allApis, chosenApi, principalIn, type ServicesCommand } from "./scope.ts";

export const API_HELP = `tollgate api list [--workspace <id|name>] [--json]   a header, then one API a line, by id: id, name
tollgate api create <name> [--workspace <id|name>]   prints the API id
tollgate api delete <id|name> [--workspace <id|name>]
  --workspace defaults to 'default' (or the only workspace there is)`;

const WORKSPACE_FLAG = { workspace: { type: "string" } } as const;

/** The one positional argument of `api <sub>`, or a usage error. */
function onePositional(positionals: string[], sub: string, what: string): string {
  const value = positionals[0];
  if (!value || positionals.length > 1) throw new UsageError(`api ${sub} takes exactly one ${what}`);
  return value;
}

/**
 * Parses and checks `args` before anything touches the data dir (a usage error creates nothing), and
 * returns the step that runs over the services.
 */
export function apiCommand(args: string[], actor: Actor, io: CliIo): ServicesCommand {
  const [sub, ...rest] = args;
  if (sub === "list") {
    const { values, positionals } = parse(rest, { ...WORKSPACE_FLAG, ...JSON_FLAG });
    if (positionals.length > 0) throw new UsageError("api list takes no arguments");
    return async (services) => {
      const principal = await principalIn(services, values.workspace as string | undefined, actor);
      printList(io, values.json === true, await allApis(services, principal), [["ID", (a) => a.id], ["NAME", (a) => a.name]]);
      return EXIT.ok;
    };
  }
  if (sub === "create") {
    const { values, positionals } = parse(rest, WORKSPACE_FLAG);
    const name = onePositional(positionals, sub, "<name>");
    // As apis.createApi's schema takes it.
    if (name.length < 3 || name.length > 256) throw new UsageError(`an API name is 3 to 256 characters, got '${name}'`);
    return async (services) => {
      const principal = await principalIn(services, values.workspace as string | undefined, actor);
      io.stdout((await services.apis.createApi(principal, { name })).apiId);
      return EXIT.ok;
    };
  }
  if (sub === "delete") {
    const { values, positionals } = parse(rest, WORKSPACE_FLAG);
    const target = onePositional(positionals, sub, "<id|name>");
    return async (services) => {
      const principal = await principalIn(services, values.workspace as string | undefined, actor);
      const api = await chosenApi(services, principal, target);
      await services.apis.deleteApi(principal, { apiId: api.id });
      io.stderr(`deleted API ${api.id} (${api.name})`);
      return EXIT.ok;
    };
  }
  throw new UsageError(sub ? `unknown api command '${sub}'` : "api needs a command: list, create or delete");
}
