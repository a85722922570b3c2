/**
 * The responses in the OpenAPI document: every operation has a 200 with the envelope's schema and
 * the error statuses it can give, each listing catalogue codes of that status. The document is
 * checked against the service: one real call of every operation answers the shape its 200 schema
 * promises, provoked errors are among those the route declares, and verifyKey's `code` enum is
 * exactly the codes verifications answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ERROR_CATALOGUE, errorCodeByTypePath, type ErrorCode } from "../../src/errors/catalogue.ts";
import { VERIFICATION_CODES } from "../../src/services/verification/index.ts";
import { createApi, createKey, otherWorkspaceRootKey, TEST_ACTOR } from "../support/contract.ts";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { schemaProblems, type JsonSchema } from "../support/json-schema.ts";

interface Response {
  description?: string;
  "x-error-codes"?: ErrorCode[];
  content?: Record<string, { schema: JsonSchema }>;
}
type Paths = Record<string, Record<string, { responses: Record<string, Response> }>>;

const NO_ROOT_KEY = new Set(["/v2/liveness", "/v2/readiness"]);

let h: Harness;
let paths: Paths;
const operations = () => Object.entries(paths).flatMap(([path, byMethod]) => Object.entries(byMethod).map(([method, op]) => ({ path, method, op })));
const responseOf = (path: string, status: number | string) => (paths[path]?.post ?? paths[path]?.get)?.responses[String(status)];

beforeAll(async () => {
  h = await startHarness();
  paths = ((await (await fetch(`${h.url}/docs/api/openapi.json`)).json()) as { paths: Paths }).paths;
});
afterAll(() => h.stop());

describe("every operation", () => {
  test("has a 200 whose schema is the envelope {meta:{requestId}, data}", () => {
    for (const { path, op } of operations()) {
      const schema = op.responses["200"]?.content?.["application/json"]?.schema;
      expect({ path, meta: schema?.properties?.meta?.required, data: schema?.required?.includes("data") })
        .toEqual({ path, meta: ["requestId"], data: true });
    }
  });

  test("behind a root key declares 400, 401 and 403; each error response lists catalogue codes of its own status", () => {
    for (const { path, op } of operations()) {
      const statuses = Object.keys(op.responses).filter((s) => s !== "200");
      if (!NO_ROOT_KEY.has(path)) expect({ path, has: ["400", "401", "403"].every((s) => statuses.includes(s)) }).toEqual({ path, has: true });
      for (const status of statuses) {
        const response = op.responses[status]!;
        const codes = response["x-error-codes"] ?? [];
        expect({ path, status, codes: codes.length > 0, statuses: [...new Set(codes.map((c) => ERROR_CATALOGUE[c].status))] })
          .toEqual({ path, status, codes: true, statuses: [Number(status)] });
        for (const code of codes) expect(response.description).toContain(ERROR_CATALOGUE[code].cause);
        const error = response.content?.["application/json"]?.schema.properties?.error;
        expect({ path, status, error: error?.required }).toEqual({ path, status, error: status === "400" ? ["title", "detail", "status", "type", "errors"] : ["title", "detail", "status", "type"] });
      }
    }
  });
});

describe("the document against the service", () => {
  /** Asserts `res` is a 200 of the shape `path`'s 200 schema promises, and returns its data. */
  async function conforms(path: string, body: unknown): Promise<any> {
    const res = await h.post(path, body);
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    const schema = responseOf(path, 200)?.content?.["application/json"]?.schema ?? {};
    expect({ path, problems: schemaProblems(schema, res.body) }).toEqual({ path, problems: [] });
    return res.body.data;
  }

  /** Asserts `res` is an error `path` declares under its status. */
  function declared(path: string, res: ApiResponse): ErrorCode {
    const code = errorCodeByTypePath(String(res.body?.error?.type).split("/errors-v2/")[1] ?? "");
    expect({ path, status: res.status, known: code !== undefined }).toEqual({ path, status: res.status, known: true });
    expect({ path, code, declared: responseOf(path, res.status)?.["x-error-codes"]?.includes(code!) }).toEqual({ path, code, declared: true });
    return code!;
  }

  test("200: one call of every operation answers the shape of its 200 schema", async () => {
    const called = new Set<string>();
    const call = (path: string, body: unknown) => (called.add(path), conforms(path, body));
    const { apiId } = await call("/v2/apis.createApi", { name: "shapes" });
    await call("/v2/apis.getApi", { apiId });
    await call("/v2/apis.listApis", { limit: 1 });
    await call("/v2/rootKeys.whoami", {});
    await call("/v2/permissions.createPermission", { name: "p1", slug: "p1", description: "d" });
    await call("/v2/permissions.createRole", { name: "r1", description: "d", permissions: ["p1"] });
    await call("/v2/identities.createIdentity", { externalId: "u1", meta: { a: 1 }, ratelimits: [{ name: "per-user", limit: 5, duration: 1000 }] });
    const key = await call("/v2/keys.createKey", {
      apiId, prefix: "x", name: "k", externalId: "u1", meta: { m: 1 }, roles: ["r1"], permissions: ["p2"], expires: h.clock.now() + 1e9,
      credits: { remaining: 10, refill: { interval: "monthly", amount: 10, refillDay: 1 } }, ratelimits: [{ name: "per-key", limit: 5, duration: 1000, autoApply: true }],
    });
    await call("/v2/keys.getKey", { keyId: key.keyId });
    await call("/v2/apis.listKeys", { apiId, limit: 1 });
    await call("/v2/keys.verifyKey", { key: key.key, permissions: "p1", ratelimits: [{ name: "per-user" }] });
    await call("/v2/keys.whoami", { key: key.key });
    await call("/v2/keys.updateKey", { keyId: key.keyId, name: "k2" });
    await call("/v2/keys.updateCredits", { keyId: key.keyId, operation: "increment", value: 5 });
    await call("/v2/keys.addPermissions", { keyId: key.keyId, permissions: ["p3"] });
    await call("/v2/keys.removePermissions", { keyId: key.keyId, permissions: ["p3"] });
    await call("/v2/keys.setPermissions", { keyId: key.keyId, permissions: ["p2"] });
    await call("/v2/keys.addRoles", { keyId: key.keyId, roles: ["r1"] });
    await call("/v2/keys.removeRoles", { keyId: key.keyId, roles: ["r1"] });
    await call("/v2/keys.setRoles", { keyId: key.keyId, roles: ["r1"] });
    await call("/v2/identities.getIdentity", { identity: "u1" });
    await call("/v2/identities.listIdentities", { limit: 1 });
    await call("/v2/identities.updateIdentity", { identity: "u1", meta: { b: 2 } });
    for (const family of ["ratelimit", "ratelimits"]) {
      await call(`/v2/${family}.limit`, { namespace: "ns", identifier: "i", limit: 5, duration: 1000 });
      await call(`/v2/${family}.setOverride`, { namespace: "ns", identifier: `${family}-*`, limit: 5, duration: 1000 });
      await call(`/v2/${family}.getOverride`, { namespace: "ns", identifier: `${family}-*` });
      await call(`/v2/${family}.listOverrides`, { namespace: "ns" });
      await call(`/v2/${family}.listNamespaces`, {});
      await call(`/v2/${family}.deleteOverride`, { namespace: "ns", identifier: `${family}-*` });
    }
    await call("/v2/ratelimit.multiLimit", [{ namespace: "ns", identifier: "i", limit: 5, duration: 1000 }]);
    await call("/v2/permissions.getPermission", { permission: "p1" });
    await call("/v2/permissions.listPermissions", { limit: 1 });
    await call("/v2/permissions.getRole", { role: "r1" });
    await call("/v2/permissions.listRoles", {});
    await call("/v2/permissions.setRolePermissions", { role: "r1", permissions: ["p1"] });
    const [log] = await call("/v2/audit.listLogs", { limit: 1 });
    await call("/v2/audit.getLog", { logId: log.logId });
    await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    await call("/v2/analytics.getVerifications", { query: "SELECT outcome, count(*) AS n FROM key_verifications_v1 GROUP BY outcome" });
    await call("/v2/keys.rerollKey", { keyId: key.keyId, expiration: 0 });
    await call("/v2/keys.deleteKey", { keyId: key.keyId });
    await call("/v2/identities.deleteIdentity", { identity: "u1" });
    await call("/v2/permissions.deleteRole", { role: "r1" });
    await call("/v2/permissions.deletePermission", { permission: "p1" });
    await call("/v2/apis.deleteApi", { apiId });
    const documented = Object.keys(paths).filter((p) => !NO_ROOT_KEY.has(p));
    expect(documented.filter((p) => !called.has(p))).toEqual([]);
  });

  test("4xx: errors provoked on a few routes are among those each declares", async () => {
    const apiId = await createApi(h, "errors");
    const { key } = await createKey(h, { apiId });
    declared("/v2/apis.getApi", await h.post("/v2/apis.getApi", { apiId: "api_missing" }));
    declared("/v2/keys.getKey", await h.post("/v2/keys.getKey", { keyId: "key_missing" }));
    declared("/v2/keys.addRoles", await h.post("/v2/keys.addRoles", { keyId: "key_missing", roles: ["r"] }));
    await h.post("/v2/identities.createIdentity", { externalId: "twice" });
    declared("/v2/identities.createIdentity", await h.post("/v2/identities.createIdentity", { externalId: "twice" }));
    declared("/v2/ratelimits.getOverride", await h.post("/v2/ratelimits.getOverride", { namespace: "nowhere", identifier: "i" }));
    declared("/v2/keys.createKey", await h.post("/v2/keys.createKey", { apiId, roles: ["no-such-role"] }));
    expect(declared("/v2/keys.verifyKey", await h.post("/v2/keys.verifyKey", { key, permissions: "a AND (" }))).toBe("permissions_query_syntax_error");
    expect(declared("/v2/keys.verifyKey", await h.post("/v2/keys.verifyKey", { key, ratelimits: [{ name: "undefined-limit" }] }))).toBe("precondition_failed");
    expect(declared("/v2/keys.verifyKey", await h.post("/v2/keys.verifyKey", { key }, { key: null }))).toBe("invalid_input");
    expect(declared("/v2/apis.listKeys", await h.post("/v2/apis.listKeys", { apiId }, { key: "tg_root_unknown" }))).toBe("root_key_not_found");
    expect(declared("/v2/apis.createApi", await h.post("/v2/apis.createApi", { name: "denied" }, { key: await h.rootKeyWith(["api.*.read_api"]) }))).toBe("insufficient_permissions");
    expect(declared("/v2/analytics.getVerifications", await h.post("/v2/analytics.getVerifications", { query: "SELECT 1" }, { key: await otherWorkspaceRootKey(h, "no-analytics") }))).toBe("analytics_not_configured");
    expect(declared("/v2/keys.verifyKey", await h.post("/v2/keys.verifyKey", { key: "x".repeat(1024 * 1024 + 1) }))).toBe("request_body_too_large");
  });

  test("200: verifyKey's `code` enum is the codes verifications answer and upstream's FORBIDDEN, each with its meaning", async () => {
    const schema = responseOf("/v2/keys.verifyKey", 200)?.content?.["application/json"]?.schema.properties?.data?.properties?.code as JsonSchema & { description: string; "x-enumDescriptions": Record<string, string> };
    // Every code the service answers, then upstream's FORBIDDEN, which it never answers (no IP allow-lists).
    expect(schema.enum).toEqual([...Object.keys(VERIFICATION_CODES), "FORBIDDEN"]);
    expect(schema["x-enumDescriptions"]).toMatchObject(VERIFICATION_CODES);
    expect(schema["x-enumDescriptions"].FORBIDDEN).toContain("Never answered by tollgate");
    for (const [code, meaning] of Object.entries(VERIFICATION_CODES)) expect(schema.description).toContain(`\`${code}\`: ${meaning}`);

    const apiId = await createApi(h, "codes");
    const verify = async (body: Record<string, unknown>) => (await h.post("/v2/keys.verifyKey", body)).body.data.code as string;
    const plain = await createKey(h, { apiId });
    const disabled = await createKey(h, { apiId, enabled: false });
    const expiring = await createKey(h, { apiId, expires: h.clock.now() + 1000 });
    const spent = await createKey(h, { apiId, credits: { remaining: 0 } });
    h.clock.advance(2000);
    const answered = new Set([
      await verify({ key: plain.key }),
      await verify({ key: "x_unknown" }),
      await verify({ key: disabled.key }),
      await verify({ key: expiring.key }),
      await verify({ key: plain.key, permissions: "not.held" }),
      await verify({ key: plain.key, ratelimits: [{ name: "none-left", limit: 0, duration: 1000 }] }),
      await verify({ key: spent.key }),
    ]);
    expect([...answered].toSorted()).toEqual(Object.keys(VERIFICATION_CODES).toSorted());
  });
});
