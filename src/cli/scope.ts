/**
 * The workspace a CLI command acts in, and the principal it acts as there: every permission, confined
 * to that workspace, with the CLI as the actor, so the services check and audit a CLI change exactly
 * as they do one made with a root key. The operator who runs the CLI owns the data dir already.
 */
import type { Services } from "../services/index.ts";
import { ALL_GRANTS, type Actor, type Principal } from "../services/auth/index.ts";
import { AppError } from "../errors/app-error.ts";
import { UsageError } from "./io.ts";

const DEFAULT_WORKSPACE = "default";

/** The principal of the CLI in `workspaceId`. */
export function cliPrincipal(workspaceId: string, actor: Actor): Principal {
  return { workspaceId, rootKeyId: actor.id, permissions: new Set(ALL_GRANTS), actor };
}

/**
 * The workspace `--workspace` names (by id or name; unknown → failure), else `default` when it
 * exists, else the only workspace; with several and no `default`, a usage error.
 */
export async function chosenWorkspace(services: Services, flag: string | undefined): Promise<{ id: string; name: string }> {
  if (flag !== undefined) return services.workspaces.get(flag);
  const byDefault = await services.workspaces.findByIdOrName(DEFAULT_WORKSPACE);
  if (byDefault) return byDefault;
  const all = await services.workspaces.list();
  if (all.length === 1) return all[0]!;
  throw new UsageError(`--workspace <id|name> is needed: there is no workspace '${DEFAULT_WORKSPACE}' but several (${all.map((w) => w.name).join(", ")})`);
}

/** The CLI's principal in the workspace `--workspace` chooses (see chosenWorkspace). */
export async function principalIn(services: Services, flag: string | undefined, actor: Actor): Promise<Principal> {
  return cliPrincipal((await chosenWorkspace(services, flag)).id, actor);
}

/** The live APIs of the principal's workspace by id (apis.listApis, page by page); with `search`, those whose id or name contains it. */
/** A command run over a data dir's services; its exit code. */
export type ServicesCommand = (services: Services) => number | Promise<number>;

export async function allApis(services: Services, principal: Principal, search?: string): Promise<Array<{ id: string; name: string; keySpaceId: string }>> {
  const all = [];
  let cursor: string | undefined;
  do {
    const page = await services.apis.listApis(principal, { limit: 1000, ...(search === undefined ? {} : { search }), ...(cursor === undefined ? {} : { cursor }) });
    all.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return all;
}

/** An API by id, else by its name (case-sensitive, as stored); unknown or ambiguous → failure naming it. */
export async function chosenApi(services: Services, principal: Principal, idOrName: string): Promise<{ id: string; name: string }> {
  // Only the APIs whose id or name contains it: the exact match is among them.
  const live = await allApis(services, principal, idOrName);
  const byId = live.find((a) => a.id === idOrName);
  if (byId) return byId;
  const named = live.filter((a) => a.name === idOrName);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new Error(`${named.length} APIs are named '${idOrName}' (${named.map((a) => a.id).join(", ")}); give the id`);
  throw new AppError("api_not_found", { detail: `No API has the id or name '${idOrName}'.` });
}
