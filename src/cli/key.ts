/** `tollgate key create|list|get|disable|enable|delete|credits`: end-user keys, through the key service (audited as the CLI). */
import type { Services } from "../services/index.ts";
import type { Actor, Principal } from "../services/auth/index.ts";
import type { ListedKeyView as KeyView } from "../services/keys/index.ts";
import type { Maybe } from "../storage/work.ts";
import { AppError } from "../errors/app-error.ts";
import { parse, requireString } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import { JSON_FLAG, printList, printOne, printValue, type Columns } from "./output.ts";
import { chosenApi, principalIn, type ServicesCommand } from "./scope.ts";
import { createKeyFields, creditsValue } from "./key-flags.ts";

export const KEY_HELP = `tollgate key create --api <id|name> [--name <name>] [--prefix <p>] [--credits <n>] [--expires <when>] [--permission <p> ...] [--role <r> ...] [--external-id <id>] [--meta <json>] [--recoverable] [--workspace <id|name>]
                                      prints the key alone (its id on stderr); --expires takes 30d, 12h,
                                      an ISO date or Unix ms
tollgate key list --api <id|name> [--search <text>] [--limit <n>] [--workspace <id|name>] [--json]
                                      a header, then one key a line: id, name, start, state, credits,
                                      external id, expires;
                                      --search matches the name, external id or start; --limit defaults to 100
tollgate key get <key id> [--workspace <id|name>] [--json]   the same header and columns for one key
tollgate key disable <key id> [--workspace <id|name>]
tollgate key enable <key id> [--workspace <id|name>]
tollgate key delete <key id> [--workspace <id|name>]
tollgate key credits <key id> set|add|remove <n> [--workspace <id|name>] [--json]
                                      prints the credits left; set also takes 'unlimited'`;

const WORKSPACE_FLAG = { workspace: { type: "string" } } as const;
const DEFAULT_LIST_LIMIT = 100;
const PAGE_SIZE = 100;

type Step = ServicesCommand;

/** A key's line: id, name, start, state, credits, external id, expires (ISO). */
function keyColumns(nowMs: number): Columns<KeyView> {
  return [
    ["ID", (k) => k.keyId],
    ["NAME", (k) => k.name],
    ["START", (k) => k.start],
    ["STATE", (k) => !k.enabled ? "disabled" : k.expires !== undefined && k.expires <= nowMs ? "expired" : "enabled"],
    ["CREDITS", (k) => k.credits === undefined || k.credits.remaining === null ? "unlimited" : k.credits.remaining],
    ["OWNER", (k) => k.identity?.externalId],
    ["EXPIRES", (k) => k.expires === undefined ? undefined : new Date(k.expires).toISOString()],
  ];
}

/** Runs `fn` on the key `keyId`; its not-found names the id and the workspace. */
async function onKey<T>(keyId: string, principal: Principal, services: Services, fn: () => Maybe<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "key_not_found") throw e;
    const ws = (await services.workspaces.get(principal.workspaceId)).name;
    throw new AppError("key_not_found", { detail: `No key has the id '${keyId}' in workspace '${ws}' (deleted, or of another workspace: see --workspace).` });
  }
}

function oneKeyId(positionals: string[], sub: string): string {
  const id = positionals[0];
  if (!id || positionals.length > 1) throw new UsageError(`key ${sub} takes exactly one <key id>`);
  return id;
}

function createStep(rest: string[], actor: Actor, io: CliIo): Step {
  const { values, positionals } = parse(rest, {
    ...WORKSPACE_FLAG, api: { type: "string" }, name: { type: "string" }, prefix: { type: "string" }, credits: { type: "string" },
    expires: { type: "string" }, permission: { type: "string", multiple: true }, role: { type: "string", multiple: true },
    "external-id": { type: "string" }, meta: { type: "string" }, recoverable: { type: "boolean" },
  });
  if (positionals.length > 0) throw new UsageError("key create takes no arguments (the API is --api)");
  const apiFlag = requireString(values, "api");
  const fields = createKeyFields(values, Date.now());
  return async (services) => {
    const principal = await principalIn(services, values.workspace as string | undefined, actor);
    const api = await chosenApi(services, principal, apiFlag);
    const created = await services.keys.createKey(principal, { apiId: api.id, ...fields });
    io.stdout(created.key);
    io.stderr(created.keyId);
    return EXIT.ok;
  };
}

/** An API's keys that match `search`, at most `limit`, page by page. */
async function matchingKeys(services: Services, principal: Principal, apiId: string, search: string | undefined, limit: number): Promise<KeyView[]> {
  const needle = search?.toLowerCase();
  const matches = (k: KeyView) => needle === undefined
    || [k.name, k.identity?.externalId, k.start].some((field) => field?.toLowerCase().includes(needle));
  const found: KeyView[] = [];
  let cursor: string | undefined;
  do {
    const page = await services.keys.listKeys(principal, { apiId, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
    for (const k of page.items) if (found.length < limit && matches(k)) found.push(k);
    cursor = page.cursor;
  } while (cursor !== undefined && found.length < limit);
  return found;
}

function listStep(rest: string[], actor: Actor, io: CliIo): Step {
  const { values, positionals } = parse(rest, { ...WORKSPACE_FLAG, ...JSON_FLAG, api: { type: "string" }, search: { type: "string" }, limit: { type: "string" } });
  if (positionals.length > 0) throw new UsageError("key list takes no arguments (the API is --api)");
  const apiFlag = requireString(values, "api");
  const limitText = (values.limit as string | undefined) ?? String(DEFAULT_LIST_LIMIT);
  if (!/^[1-9]\d{0,8}$/.test(limitText)) throw new UsageError(`--limit must be a whole number of 1 or more, got '${limitText}'`);
  const limit = Number(limitText);
  return async (services) => {
    const principal = await principalIn(services, values.workspace as string | undefined, actor);
    const api = await chosenApi(services, principal, apiFlag);
    const nowMs = Date.now();
    printList(io, values.json === true, await matchingKeys(services, principal, api.id, values.search as string | undefined, limit), keyColumns(nowMs));
    return EXIT.ok;
  };
}

function getStep(rest: string[], actor: Actor, io: CliIo): Step {
  const { values, positionals } = parse(rest, { ...WORKSPACE_FLAG, ...JSON_FLAG });
  const keyId = oneKeyId(positionals, "get");
  return async (services) => {
    const principal = await principalIn(services, values.workspace as string | undefined, actor);
    const nowMs = Date.now();
    printOne(io, values.json === true, await onKey(keyId, principal, services, () => services.keys.getKey(principal, { keyId })), keyColumns(nowMs));
    return EXIT.ok;
  };
}

/** `key disable|enable|delete <key id>`. */
function changeStep(sub: "disable" | "enable" | "delete", rest: string[], actor: Actor, io: CliIo): Step {
  const { values, positionals } = parse(rest, WORKSPACE_FLAG);
  const keyId = oneKeyId(positionals, sub);
  return async (services) => {
    const principal = await principalIn(services, values.workspace as string | undefined, actor);
    await onKey(keyId, principal, services, () => sub === "delete"
      ? services.keys.deleteKey(principal, { keyId })
      : services.keys.updateKey(principal, { keyId, enabled: sub === "enable" }));
    io.stderr(`${sub}d key ${keyId}`);
    return EXIT.ok;
  };
}

const CREDIT_OPERATIONS = { set: "set", add: "increment", remove: "decrement" } as const;

function creditsStep(rest: string[], actor: Actor, io: CliIo): Step {
  const { values, positionals } = parse(rest, { ...WORKSPACE_FLAG, ...JSON_FLAG });
  const [keyId, verb, amount] = positionals;
  if (!keyId || !verb || amount === undefined || positionals.length > 3) throw new UsageError("key credits takes <key id> set|add|remove <n>");
  if (!Object.hasOwn(CREDIT_OPERATIONS, verb)) throw new UsageError(`key credits takes set, add or remove, got '${verb}'`);
  const operation = CREDIT_OPERATIONS[verb as keyof typeof CREDIT_OPERATIONS];
  const value = operation === "set" && amount === "unlimited" ? null : creditsValue(`key credits ${verb}`, amount);
  return async (services) => {
    const principal = await principalIn(services, values.workspace as string | undefined, actor);
    const credits = await onKey(keyId, principal, services, () => services.keys.updateCredits(principal, { keyId, operation, value }));
    printValue(io, values.json === true, credits, (c) => c.remaining ?? "unlimited");
    return EXIT.ok;
  };
}

/**
 * Parses and checks `args` before anything touches the data dir (a usage error creates nothing), and
 * returns the step that runs over the services.
 */
export function keyCommand(args: string[], actor: Actor, io: CliIo): Step {
  const [sub, ...rest] = args;
  switch (sub) {
    case "create": return createStep(rest, actor, io);
    case "list": return listStep(rest, actor, io);
    case "get": return getStep(rest, actor, io);
    case "disable": case "enable": case "delete": return changeStep(sub, rest, actor, io);
    case "credits": return creditsStep(rest, actor, io);
    default:
      throw new UsageError(sub ? `unknown key command '${sub}'` : "key needs a command: create, list, get, disable, enable, delete or credits");
  }
}
