/** The official SDK (`@unkey/api` 2.5) against tollgate: every apis.* method parses our answers and errors. */
import { describe, expect, test } from "bun:test";
import { BadRequestErrorResponse, ForbiddenErrorResponse, NotFoundErrorResponse, UnauthorizedErrorResponse } from "@unkey/api/models/errors";
import { testServer } from "../support/route-contract.ts";
import { sdkClient, sdkFor } from "./client.ts";

const h = testServer();
const unkey = sdkFor(h);

describe("apis.* through @unkey/api", () => {
  test("createApi and getApi", async () => {
    const created = await unkey.apis.createApi({ name: "sdk-apis" });
    expect(created.meta.requestId).toStartWith("req_");
    const got = await unkey.apis.getApi({ apiId: created.data.apiId });
    expect(got.data).toEqual({ id: created.data.apiId, name: "sdk-apis" });
  });

  test("listKeys pages through every key with the SDK's iterator and stops on the last page", async () => {
    const { apiId } = (await unkey.apis.createApi({ name: "sdk-list" })).data;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await unkey.keys.createKey({ apiId, name: `k${i}`, externalId: i % 2 ? "odd" : "even" })).data.keyId);
    const seen: string[] = [];
    let pages = 0;
    for await (const page of await unkey.apis.listKeys({ apiId, limit: 2 })) {
      pages++;
      seen.push(...page.result.data.map((k) => k.keyId));
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].sort());
    const odd = await unkey.apis.listKeys({ apiId, externalId: "odd" });
    expect(odd.result.data.map((k) => k.identity?.externalId)).toEqual(["odd", "odd"]);
    expect(odd.result.pagination).toEqual({ hasMore: false });
  });

  test("listKeys with decrypt returns the plaintext of recoverable keys", async () => {
    const { apiId } = (await unkey.apis.createApi({ name: "sdk-decrypt" })).data;
    const { key } = (await unkey.keys.createKey({ apiId, recoverable: true })).data;
    const page = await unkey.apis.listKeys({ apiId, decrypt: true });
    expect(page.result.data[0]?.plaintext).toBe(key);
  });

  test("deleteApi, after which getApi is NotFoundErrorResponse", async () => {
    const { apiId } = (await unkey.apis.createApi({ name: "sdk-doomed" })).data;
    const deleted = await unkey.apis.deleteApi({ apiId });
    expect(deleted.data).toEqual({});
    const error = await unkey.apis.getApi({ apiId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundErrorResponse);
    expect((error as NotFoundErrorResponse).data$.error.type).toEndWith("/api-reference/errors-v2/service/data/api_not_found");
  });

  test("400, 401 and 403 surface as the SDK's typed errors", async () => {
    const bad = await unkey.apis.createApi({ name: "ab" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestErrorResponse);
    expect((bad as BadRequestErrorResponse).data$.error.errors.map((e) => e.location)).toEqual(["body.name"]);
    const unknown = sdkClient(h, "tg_root_unknown");
    expect(await unknown.apis.createApi({ name: "nope" }).catch((e: unknown) => e)).toBeInstanceOf(UnauthorizedErrorResponse);
    const weak = sdkClient(h, await h.rootKeyWith(["api.*.read_api"]));
    expect(await weak.apis.createApi({ name: "nope" }).catch((e: unknown) => e)).toBeInstanceOf(ForbiddenErrorResponse);
  });
});
