/**
 * The authentication and authorization contract, run against every protected route of the one
 * route table (test/support/route-table.ts): a route registered without a row fails the first test.
 * The isolation matrix (a root key of another workspace) is isolation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { INSUFFICIENT, INVALID_INPUT, ROOT_KEY_NOT_FOUND, TEST_ACTOR, createApi, expectError } from "../support/contract.ts";
import { DENIED, expectEveryRoute, expectRouteOutcome, routeTable, type Fixtures, type Outcome, type Route } from "../support/route-table.ts";

let h: Harness;
let f: Fixtures;
const { routes: ROUTES, setUp } = routeTable(() => h);

const post = async (r: Route, key: string | null, headers?: Record<string, string>) =>
  h.post(r.path, await r.body(f), { key, ...(headers ? { headers } : {}) });

const expectOutcome = (res: ApiResponse, outcome: Outcome) => expectRouteOutcome(h, res, outcome);

// Upstream's words for a missing and for a malformed header (DECISIONS fixes only their status, 400).
const MISSING_HEADER = "Authorization header for 'bearer' scheme";
const MALFORMED_HEADER = "You must provide a valid root key in the Authorization header in the format 'Bearer ROOT_KEY'. Your authorization header is missing the 'Bearer ' prefix.";

beforeAll(async () => {
  h = await startHarness();
  f = await setUp();
});
afterAll(async () => { await h.stop(); });

test("the table lists every protected route the app registers", () => {
  expectEveryRoute(h, ROUTES);
});

describe("200", () => {
  for (const r of ROUTES) {
    test(`${r.path}: a root key holding exactly ${r.needs.join(" + ")} succeeds`, async () => {
      const res = await post(r, await h.rootKeyWith(r.needs));
      expect(res.status).toBe(200);
      if (r.path === "/v2/keys.verifyKey") expect(res.body.data.code).toBe("VALID");
    });
  }

  test("`apis.*.create_api` works like `api.*.create_api`", async () => {
    expect((await h.post("/v2/apis.createApi", { name: "alias" }, { key: await h.rootKeyWith(["apis.*.create_api"]) })).status).toBe(200);
  });

  test("`api.<apiId>.read_api` grants getApi on that API only", async () => {
    const other = await createApi(h, "other");
    const scoped = await h.rootKeyWith([`api.${f.apiId}.read_api`]);
    expect((await h.post("/v2/apis.getApi", { apiId: f.apiId }, { key: scoped })).status).toBe(200);
    expectError(h, await h.post("/v2/apis.getApi", { apiId: other }, { key: scoped }), 403, INSUFFICIENT);
  });
});

describe("400", () => {
  for (const r of ROUTES) {
    test(`${r.path}: 400 'Authorization header for 'bearer' scheme' (upstream v2_identities_get_identity 400_test 'missing Authorization header')`, async () => {
      expectError(h, await post(r, null), 400, INVALID_INPUT, MISSING_HEADER);
    });

    test(`${r.path}: malformed headers ('Basic x', 'Bearer', '') → 400 (upstream v2_apis_delete_api 401_test 'malformed authorization header')`, async () => {
      expectError(h, await post(r, null, { authorization: "Basic x" }), 400, "service/authentication/malformed", MALFORMED_HEADER);
      expectError(h, await post(r, null, { authorization: "Bearer" }), 400, "service/authentication/malformed", MALFORMED_HEADER);
      expectError(h, await post(r, null, { authorization: "" }), 400, INVALID_INPUT, MISSING_HEADER);
    });

    test(`${r.path}: validation runs before authentication; 400 'POST request body for '${r.path}' failed to validate schema' (upstream v2_apis_delete_api 400_test 'missing apiId')`, async () => {
      const body = await r.body(f);
      const bad = Array.isArray(body) ? [{ ...(body[0] as object), notAField: true }] : { ...body, notAField: true };
      const res = await h.post(r.path, bad, { key: null });
      expectError(h, res, 400, INVALID_INPUT, `POST request body for '${r.path}' failed to validate schema`);
      expect(res.body.error.errors.map((e: { location: string }) => e.location)).toContain(Array.isArray(body) ? "body[0].notAField" : "body.notAField");
    });
  }
});

describe("401", () => {
  let revoked: string;
  beforeAll(async () => {
    const rk = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "revoked", permissions: [...ALL_GRANTS] }, TEST_ACTOR);
    await h.running.services.workspaces.revokeRootKey(rk.id, TEST_ACTOR);
    revoked = rk.key;
  });

  for (const r of ROUTES) {
    test(`${r.path}: unknown root key (upstream v2_apis_delete_api 401_test 'invalid authorization token')`, async () => {
      expectError(h, await post(r, "tg_root_doesnotexist"), 401, ROOT_KEY_NOT_FOUND, "The provided root key is invalid. We could not find the requested key.");
    });

    test(`${r.path}: revoked root key`, async () => {
      expectError(h, await post(r, revoked), 401, ROOT_KEY_NOT_FOUND);
    });
  }

  test("a root key used with two spellings of its header is refused under both once revoked", async () => {
    const r = ROUTES.find((route) => route.path === "/v2/ratelimits.limit")!;
    const rk = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "spelled twice", permissions: [...ALL_GRANTS] }, TEST_ACTOR);
    const spellings = [`Bearer ${rk.key}`, `  Bearer   ${rk.key} `];
    for (const authorization of spellings) expect((await post(r, null, { authorization })).status).toBe(200);
    await h.running.services.workspaces.revokeRootKey(rk.id, TEST_ACTOR);
    for (const authorization of spellings) expectError(h, await post(r, null, { authorization }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  for (const r of ROUTES) {
    test(`${r.path}: expired root key → forbidden`, async () => {
      const { key } = await h.running.services.workspaces.createRootKey(
        { workspace: "default", name: "expiring", permissions: [...ALL_GRANTS], expiresAt: h.clock.now() + 1000 }, TEST_ACTOR);
      expect((await post(r, key)).status).toBe(200);
      h.clock.advance(1001);
      expectError(h, await post(r, key), 403, "service/authorization/forbidden", "The root key has expired.");
    });

    // A route that needs no grant (rootKeys.whoami) answers any valid key, '*' or not: no such case for it.
    if (r.needs.length > 0) {
      test(`${r.path}: a bare '*' grant gives nothing`, async () => {
        const rk = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "star", permissions: ["api.*.read_api"] }, TEST_ACTOR);
        // The CLI refuses '*' as a grant; a row holding it (e.g. imported) must still grant nothing.
        await h.records.run("UPDATE root_keys SET permissions = ? WHERE id = ?", JSON.stringify(["*"]), rk.id);
        expectOutcome(await post(r, rk.key), r.denied ?? DENIED);
      });
    }
  }
});
