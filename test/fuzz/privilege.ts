/**
 * The least-privilege campaign: two workspaces holding the same fixtures, and for every route two
 * root keys of the first one: one holding exactly the route's grants, one holding a neighbouring
 * route's. Each sends the route's valid body and a sample of its hostile bodies. A problem is:
 * - a 5xx, or an answer outside the envelope (as in the hostile-input campaign);
 * - a 2xx for a caller lacking one of the route's grants (verifyKey: anything but NOT_FOUND);
 * - a 2xx that names an id, key or name of the other workspace;
 * - a key whose roles or direct permissions changed through a caller without the rbac grant for
 *   that change (add or remove), except where the change is the route's own purpose;
 * - a refused request that changed a table;
 * Besides the hostile bodies, every field that can carry roles or permissions is set to real ones.
 * - an existence oracle: the other workspace's record and one that never existed, put in the same
 *   field, answered differently (status, title, detail, type or verification data).
 */
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import type { Harness } from "../support/harness.ts";
import { randomKeyPart } from "../../src/lib/ids.ts";
import { TEST_ACTOR } from "../support/contract.ts";
import { rng, type Rng } from "../support/prng.ts";
import { routeTable, type Fixtures, type Route } from "../support/route-table.ts";
import { answerProblems, bodySchemas, sample, send, settle, type Answer, type FuzzSummary } from "./campaign.ts";
import { digest } from "./digest.ts";
import { hostileBodies, type Hostile, type Schema } from "./mutate.ts";

const OTHER_WORKSPACE = "elsewhere";

/** The direct role and permission links of every key, and which keys exist. */
interface Links {
  keys: Set<string>;
  role: Map<string, Set<string>>;
  permission: Map<string, Set<string>>;
}

function links(h: Harness): Links {
  const db = h.embedded.storage.sqlite;
  const grouped = (sql: string) => {
    const out = new Map<string, Set<string>>();
    for (const { k, v } of db.query<{ k: string; v: string }, []>(sql).all()) {
      const set = out.get(k) ?? new Set<string>();
      set.add(v);
      out.set(k, set);
    }
    return out;
  };
  return {
    keys: new Set(db.query<{ id: string }, []>("SELECT id FROM keys").all().map((r) => r.id)),
    role: grouped("SELECT key_id AS k, role_id AS v FROM key_roles"),
    permission: grouped("SELECT key_id AS k, permission_id AS v FROM key_permissions"),
  };
}

/** Routes whose purpose removes links of every key: deleting the permission or role itself. */
const UNLINKING_ROUTES: Readonly<Record<"role" | "permission", string>> = {
  role: "/v2/permissions.deleteRole",
  permission: "/v2/permissions.deletePermission",
};

/** Link changes that the caller's grants do not cover. A new key copying its original's links (reroll) is no change. */
function linkProblems(path: string, grants: ReadonlySet<string>, before: Links, after: Links): string[] {
  const problems: string[] = [];
  for (const kind of ["role", "permission"] as const) {
    const addGrant = `rbac.*.add_${kind}_to_key`;
    const removeGrant = `rbac.*.remove_${kind}_from_key`;
    for (const keyId of new Set([...before[kind].keys(), ...after[kind].keys()])) {
      const was = before[kind].get(keyId) ?? new Set<string>();
      const now = after[kind].get(keyId) ?? new Set<string>();
      const added = [...now].some((x) => !was.has(x));
      const removed = [...was].some((x) => !now.has(x));
      const copied = !before.keys.has(keyId) && path === "/v2/keys.rerollKey";
      if (added && !copied && !grants.has(addGrant)) problems.push(`${kind}s of ${keyId} grew without ${addGrant}`);
      const gone = !after.keys.has(keyId) || path === UNLINKING_ROUTES[kind];
      if (removed && !gone && !grants.has(removeGrant)) problems.push(`${kind}s of ${keyId} shrank without ${removeGrant}`);
    }
  }
  return problems;
}

/** The strings of the other workspace's fixtures; none may appear in an answer to this one. */
function secretsOf(f: Fixtures): string[] {
  return [f.apiId, f.keyId, f.key, f.identityId, f.permissionId, f.permissionSlug, f.roleId, f.roleName, f.namespace, f.namespaceId, f.overrideIdentifier];
}

/** A caller: its root key and the grants it holds. */
interface Caller {
  label: string;
  rootKey: string;
  grants: ReadonlySet<string>;
}

/**
 * The next route in the table whose grants differ, so that its caller lacks at least one of
 * `index`'s; none for a route that needs no grant (rootKeys.whoami), which no caller can lack.
 */
function neighbour(routes: readonly Route[], index: number): Route | undefined {
  const own = routes[index]!;
  if (own.needs.length === 0) return undefined;
  for (let step = 1; step < routes.length; step++) {
    const other = routes[(index + step) % routes.length]!;
    if (own.needs.some((g) => !other.needs.includes(g))) return other;
  }
  throw new Error(`no route lacks a grant of ${own.path}`);
}

/** A value shaped like `value` (same prefix before `_`, same length) that no record has. */
function fabricated(value: string): string {
  const cut = value.indexOf("_");
  const head = cut > 0 ? value.slice(0, cut + 1) : "";
  return head + randomKeyPart(32).slice(0, Math.max(8, value.length - head.length));
}

/** The fields of `body` that hold a fixture's value, with the other workspace's value for the same fixture. */
function addressedFields(body: unknown, own: Fixtures, other: Fixtures): Array<{ field: string; foreign: string; missing: string }> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return [];
  const out: Array<{ field: string; foreign: string; missing: string }> = [];
  for (const [field, value] of Object.entries(body)) {
    const fixture = (Object.keys(own) as Array<keyof Fixtures>).find((k) => own[k] === value && value !== "");
    if (fixture && typeof value === "string") out.push({ field, foreign: other[fixture], missing: fabricated(value) });
  }
  return out;
}

/** What must be equal between a foreign and a missing record's answers; the value sent is the caller's own and may be echoed. */
function visible(a: Answer, sent: string): string {
  const text = a.text.replaceAll(sent, "<sent>");
  try {
    const body = JSON.parse(text);
    return JSON.stringify({ status: a.status, error: body.error, data: body.data, fields: Object.keys(body).sort() });
  } catch {
    return JSON.stringify({ status: a.status, text });
  }
}

/**
 * Bodies that set a field through which a route could grant roles or permissions (any `roles` or
 * `permissions` array in its schema) to this workspace's role and permission, on top of the valid body.
 */
function grantingBodies(valid: unknown, schema: Schema | undefined, f: Fixtures): Hostile[] {
  if (valid === null || typeof valid !== "object" || Array.isArray(valid)) return [];
  const fields: Record<string, string> = { roles: f.roleName, permissions: f.permissionSlug };
  return Object.entries(fields)
    .filter(([field]) => schema?.properties?.[field]?.type === "array" || schema?.properties?.[field]?.anyOf?.some((s) => s.type === "array"))
    .map(([field, value]) => ({ label: `${field} through the body`, text: JSON.stringify({ ...valid, [field]: [value] }) }));
}

class PrivilegeCampaign {
  readonly summary: FuzzSummary = { requests: 0, byStatus: {}, problems: [] };

  constructor(private readonly h: Harness, private readonly otherSecrets: readonly string[]) {}

  async probe(route: Route, caller: Caller, hostile: Hostile): Promise<Answer> {
    const before = digest(this.h);
    const linksBefore = links(this.h);
    const a = await send(this.h, route.path, hostile, "POST", caller.rootKey);
    this.count(a);
    const what = `${route.path} as ${caller.label} [${hostile.label}]`;
    const problems = answerProblems(this.h, what, a);
    if (a.status >= 400) {
      const changed = digest(this.h).changedByRequestsSince(before);
      if (changed.length > 0) problems.push(`${what}: refused with ${a.status} but changed ${changed.join(", ")}`);
    } else {
      await settle(this.h);
      if (!route.needs.every((g) => caller.grants.has(g)) && !maskedDenial(route, a)) problems.push(`${what}: ${a.status} without ${route.needs.join(" and ")}`);
      const leaked = this.otherSecrets.filter((s) => a.text.includes(s));
      if (leaked.length > 0) problems.push(`${what}: answer names the other workspace's ${leaked.join(", ")}`);
      problems.push(...linkProblems(route.path, caller.grants, linksBefore, links(this.h)).map((p) => `${what}: ${p}`));
    }
    this.summary.problems.push(...problems);
    return a;
  }

  /** The other workspace's record and a made-up one in `field` must get the same answer. */
  async oracle(route: Route, caller: Caller, body: Record<string, unknown>, field: string, foreign: string, missing: string): Promise<void> {
    const answers: Answer[] = [];
    for (const value of [foreign, missing]) {
      const a = await send(this.h, route.path, { label: field, text: JSON.stringify({ ...body, [field]: value }) }, "POST", caller.rootKey);
      this.count(a);
      answers.push(a);
    }
    const f = visible(answers[0]!, foreign);
    const m = visible(answers[1]!, missing);
    if (f !== m) this.summary.problems.push(`${route.path} as ${caller.label}: another workspace's ${field} answers ${f}, a missing one ${m}`);
  }

  private count(a: Answer): void {
    this.summary.requests++;
    this.summary.byStatus[a.status] = (this.summary.byStatus[a.status] ?? 0) + 1;
  }
}

/** verifyKey hides a missing grant as a failed verification. */
function maskedDenial(route: Route, a: Answer): boolean {
  if (route.denied !== "NOT_FOUND") return false;
  try {
    const data = JSON.parse(a.text).data;
    return data?.valid === false && data?.code === "NOT_FOUND";
  } catch {
    return false;
  }
}

/**
 * Runs the campaign: for every route, the exact caller and the neighbour's caller each send the
 * valid body, up to `perRoute` hostile bodies, and the foreign/missing pairs of every field that
 * names a record. Problems are collected, not thrown.
 */
export async function runPrivilegeCampaign(h: Harness, opts: { seed: number; perRoute: number; log?: (line: string) => void }): Promise<FuzzSummary> {
  const next: Rng = rng(opts.seed);
  const own = routeTable(() => h);
  const ownFixtures = await own.setUp();
  await h.running.services.workspaces.create({ name: OTHER_WORKSPACE }, TEST_ACTOR);
  const otherRoot = await h.rootKeyWith([...ALL_GRANTS], OTHER_WORKSPACE);
  const otherFixtures = await routeTable(() => h, { workspace: OTHER_WORKSPACE, rootKey: otherRoot, tag: "zq" }).setUp();
  const schemas = await bodySchemas(h);
  const c = new PrivilegeCampaign(h, secretsOf(otherFixtures));
  await settle(h);
  for (const [index, route] of own.routes.entries()) {
    const near = neighbour(own.routes, index);
    const callers: Caller[] = [
      { label: `only ${route.needs.join("+")}`, rootKey: await h.rootKeyWith(route.needs), grants: new Set(route.needs) },
      ...(near ? [{ label: `only ${near.needs.join("+")} (of ${near.path})`, rootKey: await h.rootKeyWith(near.needs), grants: new Set(near.needs) }] : []),
    ];
    for (const caller of callers) {
      const valid = await route.body(ownFixtures);
      await settle(h);
      await c.probe(route, caller, { label: "valid body", text: JSON.stringify(valid) });
      for (const granting of grantingBodies(await route.body(ownFixtures), schemas.get(route.path), ownFixtures)) await c.probe(route, caller, granting);
      for (const hostile of sample(next, hostileBodies(await route.body(ownFixtures), schemas.get(route.path)), opts.perRoute)) {
        await c.probe(route, caller, hostile);
      }
      const body = await route.body(ownFixtures);
      for (const { field, foreign, missing } of addressedFields(body, ownFixtures, otherFixtures)) {
        await c.oracle(route, caller, body as Record<string, unknown>, field, foreign, missing);
      }
    }
    opts.log?.(`${route.path}: done`);
  }
  return c.summary;
}
