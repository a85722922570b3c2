/**
 * The OpenAPI document at /docs/api/openapi.json: every route the app serves is in it (the
 * operational endpoints aside), each with a summary and a tag, and every field of every request
 * body has a description and bounds (lengths, ranges, item counts), so the docs UI shows what a
 * request may hold. The page that renders it is checked in test/e2e/docs-ui.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { servedRoutes } from "../support/served-routes.ts";
import { startHarness, type Harness } from "../support/harness.ts";

interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  additionalProperties?: unknown;
}

interface Operation {
  summary?: string;
  tags?: string[];
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
}

/** Served, but not API operations: the metrics endpoint and the documentation itself. */
const NOT_OPERATIONS = (path: string) => path === "/metrics" || path === "/docs" || path.startsWith("/docs/") || path === "/" || path === "/console" || path.startsWith("/console/");

/**
 * Fields whose bound is not one a schema can state, so their descriptions state it. The analytics
 * query is limited to 16 KiB in UTF-8 bytes (upstream's limit, checked by the service with a 400
 * that says so), and maxLength counts characters. A key's `meta` is any JSON object, bounded by the
 * request body's 1 MiB.
 */
const BOUND_IN_DESCRIPTION = new Map([
  ["/v2/analytics.getVerifications body.query", "at most 16 KiB"],
  // The bound of meta in bytes, which a JSON schema cannot state (services/meta).
  ["/v2/keys.createKey body.meta", "1,048,576 bytes"],
  ["/v2/keys.updateKey body.meta", "1,048,576 bytes"],
  ["/v2/identities.createIdentity body.meta", "1,048,576 bytes"],
  ["/v2/identities.updateIdentity body.meta", "1,048,576 bytes"],
]);

/** Every property under `schema`, with its path, e.g. `body.credits.refill.amount`. */
function fields(schema: Schema, at = "body"): Array<[string, Schema]> {
  const out: Array<[string, Schema]> = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    out.push([`${at}.${name}`, prop]);
    out.push(...nested(prop, `${at}.${name}`));
  }
  return out;
}

function nested(schema: Schema, at: string): Array<[string, Schema]> {
  return [
    ...fields(schema, at),
    ...(schema.items ? nested(schema.items, `${at}[]`) : []),
    ...(schema.anyOf ?? []).flatMap((s) => nested(s, at)),
  ];
}

/** What is missing from a field's bounds: empty when bounded. */
function missingBound(s: Schema): string | undefined {
  const variants = s.anyOf?.filter((v) => v.type !== "null");
  if (variants && variants.length > 0) return variants.map(missingBound).find((m) => m !== undefined);
  if (s.enum || s.const !== undefined) return undefined;
  if (s.type === "string" && s.maxLength === undefined && !s.format) return "maxLength";
  if ((s.type === "integer" || s.type === "number") && (s.minimum === undefined || s.maximum === undefined)) return "minimum and maximum";
  if (s.type === "array" && s.maxItems === undefined) return "maxItems";
  if (s.type === "object" && !s.properties && s.additionalProperties !== false && s.maxProperties === undefined) return "properties or maxProperties";
  return undefined;
}

describe("the OpenAPI document", () => {
  let h: Harness;
  let paths: Record<string, Record<string, Operation>>;
  let tags: Array<{ name: string; description?: string }>;
  const operations = () => Object.entries(paths).flatMap(([path, byMethod]) => Object.entries(byMethod).map(([method, op]) => ({ path, method, op })));

  const logLines: string[] = [];

  beforeAll(async () => {
    h = await startHarness({ logLines });
    const res = await fetch(`${h.url}/docs/api/openapi.json`);
    expect(res.status).toBe(200);
    ({ paths, tags } = (await res.json()) as { paths: typeof paths; tags: typeof tags });
  });
  afterAll(() => h.stop());

  test("documents every route the app serves, and nothing else", () => {
    const app = createApp({ services: h.running.services, logger: silentLogger, docsUrl: () => "" });
    const served = servedRoutes(app).filter((r) => !NOT_OPERATIONS(r.path)).map((r) => `${r.method} ${r.path}`);
    const documented = operations().map(({ path, method }) => `${method.toUpperCase()} ${path}`);
    expect(documented.toSorted()).toEqual([...new Set(served)].toSorted());
    expect(documented.length).toBeGreaterThan(40);
  });

  test("every operation's request example passes its own schema, and sent as it is, is never a 400; those that name no record succeed", async () => {
    const succeed = ["/v2/apis.createApi", "/v2/apis.listApis", "/v2/keys.verifyKey", "/v2/identities.createIdentity", "/v2/identities.listIdentities",
      "/v2/ratelimit.limit", "/v2/ratelimits.limit", "/v2/ratelimit.multiLimit", "/v2/permissions.createPermission", "/v2/permissions.listPermissions",
      "/v2/permissions.listRoles", "/v2/ratelimit.listNamespaces", "/v2/ratelimits.listNamespaces", "/v2/audit.listLogs", "/v2/rootKeys.whoami"];
    for (const { path, method, op } of operations()) {
      if (method !== "post") continue;
      const example = op.requestBody?.content["application/json"]?.example;
      expect({ path, hasExample: example !== undefined }).toEqual({ path, hasExample: true });
      const res = await h.post(path, example);
      expect({ path, status: res.status === 400 ? 400 : "not 400" }).toEqual({ path, status: "not 400" });
      if (succeed.includes(path)) expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });

  test("GET /docs leads to the API reference", async () => {
    const res = await fetch(`${h.url}/docs`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/docs/api");
    expect((await fetch(`${h.url}/docs`)).url).toBe(`${h.url}/docs/api`);
  });

  test("the start log line names the console's and the API reference's URLs, which answer", async () => {
    const started = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "tollgate listening");
    expect(started).toMatchObject({ url: h.url, console: `${h.url}/`, docs: `${h.url}/docs/api` });
    expect((await fetch(started.docs)).status).toBe(200);
    const consolePage = await fetch(started.console);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain("<!doctype html>");
  });

  test("each operation has a summary and a tag; all but liveness and readiness need a root key", () => {
    for (const { path, method, op } of operations()) {
      expect({ path, summary: Boolean(op.summary), tags: (op.tags?.length ?? 0) > 0 }).toEqual({ path, summary: true, tags: true });
      if (path === "/v2/liveness" || path === "/v2/readiness") expect(op.security).toEqual([]);
      else expect({ path, method, security: op.security }).toEqual({ path, method: "post", security: undefined });
    }
  });

  test("every tag an operation uses is described, and only those; one group holds both rate-limit path families and says why both exist", () => {
    const used = [...new Set(operations().flatMap(({ op }) => op.tags ?? []))].toSorted();
    expect(tags.map((t) => t.name).toSorted()).toEqual(used);
    for (const tag of tags) expect({ tag: tag.name, described: (tag.description?.length ?? 0) > 20 }).toEqual({ tag: tag.name, described: true });
    const described = (name: string) => tags.find((t) => t.name === name)?.description ?? "";
    expect(described("ratelimit")).toBe("");
    expect(described("ratelimits")).toContain("`/v2/ratelimits.*`");
    expect(described("ratelimits")).toContain("`/v2/ratelimit.*`");
    const rateLimitPaths = operations().filter(({ path }) => path.startsWith("/v2/ratelimit"));
    for (const { path, op } of rateLimitPaths) expect({ path, tags: op.tags, plural: op.summary?.endsWith("(plural path)") }).toEqual({ path, tags: ["ratelimits"], plural: path.startsWith("/v2/ratelimits.") });
  });

  test("every request field has a description", () => {
    const undescribed = operations().flatMap(({ path, op }) => {
      const schema = op.requestBody?.content["application/json"]?.schema;
      return schema ? fields(schema).filter(([, s]) => !s.description).map(([at]) => `${path} ${at}`) : [];
    });
    expect(undescribed).toEqual([]);
  });

  test("every request field has bounds: string lengths, number ranges, item counts", () => {
    const unbounded = operations().flatMap(({ path, op }) => {
      const schema = op.requestBody?.content["application/json"]?.schema;
      if (!schema) return [];
      return fields(schema).flatMap(([at, s]) => {
        const gap = missingBound(s);
        return gap && !BOUND_IN_DESCRIPTION.has(`${path} ${at}`) ? [`${path} ${at}: no ${gap}`] : [];
      });
    });
    expect(unbounded).toEqual([]);
  });

  test("a bound given only in words is given there", () => {
    for (const [field, words] of BOUND_IN_DESCRIPTION) {
      const [path = "", at = ""] = field.split(" ");
      const schema = paths[path]?.post?.requestBody?.content["application/json"]?.schema;
      const found = schema ? fields(schema).find(([name]) => name === at)?.[1] : undefined;
      // A nullable field's bound may sit on the variant it shares with other routes.
      const texts = [found?.description, ...(found?.anyOf ?? []).map((v) => v.description)];
      expect({ field, described: texts.some((d) => d?.includes(words)) }).toEqual({ field, described: true });
    }
  });
});
