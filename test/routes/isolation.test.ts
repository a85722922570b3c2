/**
 * The isolation matrix, generated from the one route table (test/support/route-table.ts), so a
 * route the app registers without a row fails the first test. For every route:
 * - a root key of the same workspace lacking each needed grant gets 403 `insufficient_permissions`
 *   naming it (verifyKey: 200 NOT_FOUND), and nothing changes;
 * - a fully privileged root key of another workspace gets 404 (verifyKey: NOT_FOUND) for a record
 *   of this one, and the owner still sees it; on routes that address no record it succeeds but its
 *   answer names nothing of this workspace;
 * - a record of this workspace and a never-existing one of the same shape get one answer (status,
 *   content type and the whole body but the request id, with the reference each named blanked
 *   out), with every grant and without each, so neither the wording nor the order of the checks
 *   tells another workspace that a leaked key, id or name is live. The routes that name records in
 *   other ways (by name, by a second id, in a list, in a grant) are in isolation.names.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { allGrantsExcept, otherWorkspaceRootKey } from "../support/contract.ts";
import { addressedRef, expectOneAnswer } from "../support/not-found.ts";
import { DENIED, expectEveryRoute, expectRouteOutcome, routeTable, type Fixtures, type Route } from "../support/route-table.ts";

let h: Harness;
let f: Fixtures;
let foreignKey: string;
const { routes: ROUTES, setUp } = routeTable(() => h);

beforeAll(async () => {
  // Windows flushed in the middle of a refused request would change the row counts it compares.
  h = await startHarness({ env: { TOLLGATE_RATELIMIT_FLUSH_MS: "60000" } });
  f = await setUp();
  foreignKey = await otherWorkspaceRootKey(h, "elsewhere");
  await h.running.services.workspaces.setAnalytics("elsewhere", true, { type: "cli", id: "test" });
});
afterAll(async () => { await h.stop(); });

/** Every id and secret of this workspace's fixtures: none may appear in another workspace's answer. */
const ownIds = () => [f.apiId, f.keyId, f.key, f.identityId, f.permissionId, f.roleId, f.permissionSlug, f.roleName, f.namespaceId, f.overrideIdentifier];
const named = (res: ApiResponse) => ownIds().filter((id) => JSON.stringify(res.body).includes(id));

/** Row counts of every table, to see that a refused request changed nothing. */
async function counts(): Promise<Record<string, number>> {
  const tables = await h.records.tables();
  return Object.fromEntries(await Promise.all(tables.map(async (name) => [name, await h.records.count(`"${name}"`)])));
}

test("the matrix covers every protected route the app registers", () => {
  expectEveryRoute(h, ROUTES);
});

describe("a root key lacking a needed grant", () => {
  for (const r of ROUTES) {
    for (const missing of r.needs) {
      test(`${r.path}: without ${missing} → ${r.denied ? "masked as not found" : "insufficient_permissions"}`, async () => {
        const body = await r.body(f);
        const key = await h.rootKeyWith(allGrantsExcept(missing));
        const before = await counts();
        const res = await h.post(r.path, body, { key });
        expectRouteOutcome(h, res, r.denied ?? DENIED);
        if (res.status === 403) expect(res.body.error.detail).toContain(`'${missing}'`);
        // Verification records its (denied) attempt as an analytics event; nothing else may change.
        if (r.denied === undefined) expect(await counts()).toEqual(before);
      });
    }
  }
});

describe("a fully privileged root key of another workspace", () => {
  const addressing = (r: Route) => r.foreign !== null;
  for (const r of ROUTES.filter(addressing)) {
    test(`${r.path}: a record of this workspace is not found`, async () => {
      const body = await r.body(f);
      expectRouteOutcome(h, await h.post(r.path, body, { key: foreignKey }), r.foreign!);
      // The owner still sees it (nothing was changed or deleted by the foreign call).
      expect((await h.post(r.path, body)).status).toBe(200);
    });
  }

  for (const r of ROUTES.filter((x) => !addressing(x))) {
    test(`${r.path}: succeeds in its own workspace and names nothing of this one`, async () => {
      const body = await r.body(f);
      const res = await h.post(r.path, body, { key: foreignKey });
      expect(res.status).toBe(200);
      expect(named(res)).toEqual([]);
      if (r.lists) expect(named(await h.post(r.path, body)).length).toBeGreaterThan(0);
    });
  }
});

describe("a record of this workspace and one that never existed: one answer", () => {
  // A workspace of its own: `elsewhere` made records above (a namespace named like this one's).
  let strangerKey: string;
  beforeAll(async () => { strangerKey = await otherWorkspaceRootKey(h, "stranger"); });

  for (const r of ROUTES.filter((x) => x.foreign !== null)) {
    for (const missing of [undefined, ...r.needs]) {
      test(`${r.path}: ${missing === undefined ? "with every grant" : `without ${missing}`}`, async () => {
        const body = await r.body(f);
        const key = missing === undefined ? strangerKey : await h.rootKeyWith(allGrantsExcept(missing), "stranger");
        await expectOneAnswer(h, { path: r.path, body, key, ref: addressedRef(body) });
      });
    }
  }
});
