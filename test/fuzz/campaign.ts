/**
 * The hostile-input campaign against one harness: every POST route of the route table gets the
 * hostile bodies of mutate.ts (sampled by a seeded PRNG, or all of them), every other route junk
 * query strings and every POST route the other methods. Each answer must be below 500 and, when
 * it is an error, in the error envelope; a refused request must leave every table as it was
 * (digest.ts); and the service must still answer its liveness probe after each route.
 */
import type { Harness } from "../support/harness.ts";
import { pick, rng, type Rng } from "../support/prng.ts";
import { registeredPostRoutes, routeTable, type Route } from "../support/route-table.ts";
import { createApp } from "../../src/app.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { digest } from "./digest.ts";
import { hostileBodies, type Hostile, type Schema } from "./mutate.ts";

export interface FuzzSummary {
  requests: number;
  byStatus: Record<number, number>;
  problems: string[];
}

export interface Answer {
  status: number;
  text: string;
}

/**
 * Problems with an answer taken alone: a 5xx, an error outside the envelope, or (for the API's
 * operations, `api`) a success outside it. The docs pages and metrics answer HTML and text.
 */
export function answerProblems(h: Harness, what: string, a: Answer, api = true): string[] {
  if (a.status >= 500) return [`${what}: ${a.status} ${a.text.slice(0, 300)}`];
  return envelopeProblems(h, what, a, api);
}

/** Whether an answer of any status is in the envelope (success or error) that its status calls for. */
export function envelopeProblems(h: Harness, what: string, a: Answer, api = true): string[] {
  if (a.status < 400 && !api) return [];
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    return [`${what}: ${a.status} with a body that is not JSON: ${a.text.slice(0, 200)}`];
  }
  if (a.status < 400) return typeof body?.meta?.requestId === "string" && "data" in body ? [] : [`${what}: ${a.status} without meta/data`];
  const e = body?.error;
  const ok = /^req_/.test(body?.meta?.requestId) && body.data === undefined && e?.status === a.status && typeof e.title === "string"
    && typeof e.detail === "string" && typeof e.type === "string" && e.type.startsWith(`${h.url}/docs/api-reference/errors-v2/`)
    && (!e.type.endsWith("/invalid_input") || Array.isArray(e.errors));
  return ok ? [] : [`${what}: ${a.status} not in the error envelope: ${a.text.slice(0, 300)}`];
}

export async function send(h: Harness, path: string, hostile: Hostile, method = "POST", rootKey = h.rootKey): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${rootKey}` };
  const contentType = hostile.contentType ?? "application/json";
  if (contentType !== "") headers["content-type"] = contentType;
  const res = await fetch(h.url + path, { method, headers, ...(method === "GET" || method === "HEAD" ? {} : { body: hostile.text }) });
  return { status: res.status, text: await res.text() };
}

/** Writes what accepted requests left in memory (verification events, credit spends), so a digest sees it. */
export async function settle(h: Harness): Promise<void> {
  await h.running.services.verificationEvents.flush();
  h.running.services.credits.flush();
}

/** The request body schema of every POST operation in the app's OpenAPI document. */
export async function bodySchemas(h: Harness): Promise<Map<string, Schema>> {
  const doc = await (await fetch(`${h.url}/docs/api/openapi.json`)).json() as { paths: Record<string, Record<string, any>> };
  const out = new Map<string, Schema>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    const schema = ops.post?.requestBody?.content?.["application/json"]?.schema;
    if (schema) out.set(path, schema as Schema);
  }
  return out;
}

export class Campaign {
  readonly summary: FuzzSummary = { requests: 0, byStatus: {}, problems: [] };
  constructor(private readonly h: Harness, private readonly log: (line: string) => void = () => {}) {}

  /** Sends one request and records its problems; a refused request must change no table. */
  async probe(path: string, hostile: Hostile, method = "POST"): Promise<Answer> {
    const before = digest(this.h);
    const a = await send(this.h, path, hostile, method);
    this.summary.requests++;
    this.summary.byStatus[a.status] = (this.summary.byStatus[a.status] ?? 0) + 1;
    const what = `${method} ${path} [${hostile.label}]`;
    this.summary.problems.push(...answerProblems(this.h, what, a, path.startsWith("/v2/")));
    if (a.status >= 400) {
      const changed = digest(this.h).changedByRequestsSince(before);
      if (changed.length > 0) this.summary.problems.push(`${what}: refused with ${a.status} but changed ${changed.join(", ")}`);
    } else {
      await settle(this.h);
    }
    return a;
  }

  async alive(after: string): Promise<void> {
    const res = await fetch(`${this.h.url}/v2/liveness`).catch((e: unknown) => e as Error);
    if (res instanceof Error || res.status !== 200) this.summary.problems.push(`liveness failed after ${after}: ${res instanceof Error ? res.message : res.status}`);
  }
}

export function sample<T>(next: Rng, items: T[], count: number): T[] {
  if (count >= items.length) return items;
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, count);
}

/** Non-POST routes get junk query strings; POST routes the other methods. */
async function otherMethods(c: Campaign, h: Harness, next: Rng): Promise<void> {
  const app = createApp({ services: h.running.services, logger: silentLogger, docsUrl: () => "" });
  const junk = ["?a=1", `?q=${"x".repeat(8000)}`, "?__proto__[polluted]=1&constructor[prototype][x]=1", "?%E0%A4%A=bad", "?a=%00"];
  for (const r of app.routes.filter((x) => x.method !== "POST" && !x.path.includes(":") && !x.path.includes("*"))) {
    await c.probe(r.path + pick(next, junk), { label: "junk query", text: "" }, r.method);
  }
  for (const path of registeredPostRoutes(h)) {
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) await c.probe(path, { label: `${method} instead of POST`, text: "{}" }, method);
  }
}

/**
 * Runs the campaign: at most `perRoute` hostile bodies per route (all when Infinity). Problems are
 * collected, not thrown, so one run reports all of them.
 */
export async function runRouteCampaign(h: Harness, opts: { seed: number; perRoute: number; log?: (line: string) => void }): Promise<FuzzSummary> {
  const next = rng(opts.seed);
  const table = routeTable(() => h);
  const fixtures = await table.setUp();
  const schemas = await bodySchemas(h);
  const c = new Campaign(h, opts.log);
  const missing = registeredPostRoutes(h).filter((p) => !table.routes.some((r: Route) => r.path === p) || !schemas.has(p));
  if (missing.length > 0) c.summary.problems.push(`routes without a row in the table or a schema in the OpenAPI document: ${missing.join(", ")}`);
  await settle(h);
  for (const r of table.routes) {
    const valid = await r.body(fixtures);
    await settle(h);
    const all = hostileBodies(valid, schemas.get(r.path));
    for (const hostile of sample(next, all, opts.perRoute)) await c.probe(r.path, hostile);
    await c.alive(r.path);
    opts.log?.(`${r.path}: ${Math.min(all.length, opts.perRoute)} of ${all.length} hostile bodies`);
  }
  await otherMethods(c, h, next);
  return c.summary;
}
