/** The `setOverride` contract, the same in both path families. */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, otherWorkspaceRootKey } from "../../../support/contract.ts";
import {
  auditEvents, createNamespace, expectData, type Family, insertDeletedNamespace, invalidBodyTests, MINUTE, namespaceId, NS_NOT_FOUND,
  NS_NOT_FOUND_DETAIL, path, uniq,
} from "./support.ts";

export function setOverrideContract(family: Family): void {
  const url = path(family, "setOverride");
  const h = routeContract(url);

  const body = (namespace: string, extra: Record<string, unknown> = {}) => ({ namespace, identifier: "user_1", limit: 10, duration: MINUTE, ...extra });
  const get = async (namespace: string, identifier: string) => (await h.post("/v2/ratelimit.getOverride", { namespace, identifier })).body.data;

  describe("200", () => {
    test("creates an override: data is exactly {overrideId}", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const res = await h.post(url, body(ns));
      expectData(res, { overrideId: expect.stringMatching(/^rlor_[1-9A-HJ-NP-Za-km-z]+$/) });
      expect(await get(ns, "user_1")).toEqual({ overrideId: res.body.data.overrideId, identifier: "user_1", limit: 10, duration: MINUTE });
      expect(await auditEvents(h, "ratelimit.set_override", res.body.data.overrideId)).toBe(1);
    });

    test("setting the same identifier again updates it and keeps its overrideId", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const first = (await h.post(url, body(ns))).body.data.overrideId;
      const second = (await h.post(url, body(ns, { limit: 20, duration: 2 * MINUTE }))).body.data.overrideId;
      expect(second).toBe(first);
      expect(await get(ns, "user_1")).toEqual({ overrideId: first, identifier: "user_1", limit: 20, duration: 2 * MINUTE });
      expect(await auditEvents(h, "ratelimit.set_override", first)).toBe(2);
    });

    test("a wildcard identifier, limit 0 and the namespace id are accepted", async () => {
      const id = await createNamespace(h);
      const res = await h.post(url, body(id, { identifier: "*@example.com", limit: 0 }));
      expect(res.status).toBe(200);
      expect(await get(id, "*@example.com")).toMatchObject({ limit: 0, identifier: "*@example.com" });
    });

    test("`ratelimit.<namespaceId>.set_override` is enough", async () => {
      const id = await createNamespace(h);
      const res = await h.post(url, body(id), { key: await h.rootKeyWith([`ratelimit.${id}.set_override`]) });
      expect(res.status).toBe(200);
    });
  });

  describe("400", () => {
    invalidBodyTests(h, url, (change) => body("ns400", change), [
      ["negative limit", { limit: -1 }, "body.limit"],
      ["duration below 1000", { duration: 999 }, "body.duration"],
      ["duration as a numeric string", { duration: "60000" }, "body.duration"],
      ["empty identifier", { identifier: "" }, "body.identifier"],
      ["identifier of 513 characters", { identifier: "i".repeat(513) }, "body.identifier"],
      ["unknown field", { async: false }, "body.async"],
    ]);
  });

  describe("403", () => {
    test("without `set_override`; the detail names both grants", async () => {
      const id = await createNamespace(h);
      await h.expectDeniedWithout("ratelimit.*.set_override", body(id), id);
    });
  });

  describe("404", () => {
    test("an unknown namespace is not created", async () => {
      const ns = uniq("ns");
      expectError(h, await h.post(url, body(ns)), 404, NS_NOT_FOUND, NS_NOT_FOUND_DETAIL);
      expect(await namespaceId(h, ns)).toBeUndefined();
    });

    test("a deleted namespace", async () => {
      const ns = uniq("gone");
      await insertDeletedNamespace(h, ns);
      expectError(h, await h.post(url, body(ns)), 404, NS_NOT_FOUND, NS_NOT_FOUND_DETAIL);
    });

    test("the namespace is checked before permissions", async () => {
      const res = await h.post(url, body(uniq("ns")), { key: await h.rootKeyWith(["ratelimit.*.limit"]) });
      expectError(h, res, 404, NS_NOT_FOUND);
    });

    test("a namespace of another workspace, even with every permission there", async () => {
      const id = await createNamespace(h);
      const foreign = await otherWorkspaceRootKey(h, uniq("ws"));
      expectError(h, await h.post(url, body(id), { key: foreign }), 404, NS_NOT_FOUND, NS_NOT_FOUND_DETAIL);
    });
  });
}
