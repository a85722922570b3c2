/** apis.listApis: the workspace's live APIs by id, paged and searchable; per-API grants see just their APIs. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { createApi, expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey } from "../../../support/contract.ts";

let h: Harness;
const ids: string[] = [];
beforeAll(async () => {
  h = await startHarness();
  for (const name of ["billing", "search_v2", "Billing-EU", "gone"]) ids.push(await createApi(h, name));
  await h.post("/v2/apis.deleteApi", { apiId: ids[3] });
});
afterAll(async () => {
  await h.stop();
});

const list = (body: unknown, key?: string) => h.post("/v2/apis.listApis", body, key === undefined ? {} : { key });
const live = () => ids.slice(0, 3).toSorted();

describe("200", () => {
  test("every live API by id with its key space, deleted ones left out; `{}` and no body alike", async () => {
    const res = await list({});
    expect(res.status).toBe(200);
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual(live());
    expect(res.body.data.find((a: { id: string }) => a.id === ids[0])).toEqual({ id: ids[0], name: "billing", keySpaceId: expect.stringMatching(/^ks_/) });
    expect(res.body.pagination).toEqual({ hasMore: false });
    expect((await list("")).body.data).toEqual(res.body.data);
  });

  test("pages: limit and cursor walk the list without gaps or repeats", async () => {
    const first = await list({ limit: 2 });
    expect(first.body.pagination.hasMore).toBe(true);
    const second = await list({ limit: 2, cursor: first.body.pagination.cursor });
    expect([...first.body.data, ...second.body.data].map((a: { id: string }) => a.id)).toEqual(live());
    expect(second.body.pagination).toEqual({ hasMore: false });
  });

  test("search: a case-insensitive substring of the name or the id; `_` matches only itself", async () => {
    expect((await list({ search: "BILLING" })).body.data.map((a: { name: string }) => a.name).toSorted()).toEqual(["Billing-EU", "billing"]);
    expect((await list({ search: "h_v" })).body.data.map((a: { name: string }) => a.name)).toEqual(["search_v2"]);
    expect((await list({ search: "g_e" })).body.data).toEqual([]);
    expect((await list({ search: ids[1]! })).body.data.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
  });

  test("a key holding read_api on one API (as api. or apis.) sees that API only", async () => {
    for (const grant of [`api.${ids[1]}.read_api`, `apis.${ids[1]}.read_api`]) {
      expect((await list({}, await h.rootKeyWith([grant]))).body.data.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
    }
  });

  test("a key of another workspace sees none of these APIs", async () => {
    expect((await list({}, await otherWorkspaceRootKey(h, "list-apis-other"))).body.data).toEqual([]);
  });
});

describe("4xx", () => {
  test("403: a key that may read no API", async () => {
    expectError(h, await list({}, await h.rootKeyWith(["api.*.read_key", `api.${ids[0]}.create_key`])), 403, INSUFFICIENT);
  });

  test("400: a limit out of range, an unknown field", async () => {
    expectInvalid(h, await list({ limit: 0 }), "body.limit");
    expectInvalid(h, await list({ name: "x" }), "body.name");
  });
});
