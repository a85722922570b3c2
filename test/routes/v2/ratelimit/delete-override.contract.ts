/** The `deleteOverride` contract, the same in both path families. */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey } from "../../../support/contract.ts";
import {
  auditEvents, createNamespace, expectData, type Family, MINUTE, NS_NOT_FOUND, OVERRIDE_NOT_FOUND, OVERRIDE_NOT_FOUND_DETAIL, path, setOverride, uniq,
} from "./support.ts";

export function deleteOverrideContract(family: Family): void {
  const url = path(family, "deleteOverride");
  const h = routeContract(url);

  const limitOf = async (namespace: string, identifier: string) =>
    (await h.post("/v2/ratelimit.limit", { namespace, identifier, limit: 3, duration: MINUTE, cost: 0 })).body.data;

  describe("200", () => {
    test("answers data {}; the override stops applying at once and is gone", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const id = await setOverride(h, ns, "user_1", 50);
      expect((await limitOf(ns, "user_1")).overrideId).toBe(id);
      expectData(await h.post(url, { namespace: ns, identifier: "user_1" }), {});
      const after = await limitOf(ns, "user_1");
      expect(after.limit).toBe(3);
      expect(after.overrideId).toBeUndefined();
      expectError(h, await h.post("/v2/ratelimit.getOverride", { namespace: ns, identifier: "user_1" }), 404, OVERRIDE_NOT_FOUND);
      expect(await auditEvents(h, "ratelimit.delete_override", id)).toBe(1);
    });

    test("setting the identifier again afterwards makes a new override id", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const first = await setOverride(h, ns, "user_1", 50);
      await h.post(url, { namespace: ns, identifier: "user_1" });
      expect(await setOverride(h, ns, "user_1", 50)).not.toBe(first);
    });

    test("a wildcard override is deleted by its own pattern, and by namespace id", async () => {
      const id = await createNamespace(h);
      await setOverride(h, id, "premium_*", 50);
      expect((await h.post(url, { namespace: id, identifier: "premium_*" })).status).toBe(200);
      expect((await limitOf(id, "premium_1")).limit).toBe(3);
    });
  });

  describe("400", () => {
    test("missing identifier", async () => {
      expectInvalid(h, await h.post(url, { namespace: "ns" }), "body.identifier");
    });

    test("identifier of 513 characters", async () => {
      expectInvalid(h, await h.post(url, { namespace: "ns", identifier: "i".repeat(513) }), "body.identifier");
    });
  });

  describe("403", () => {
    test("without `delete_override`; the override stays", async () => {
      const id = await createNamespace(h);
      await setOverride(h, id, "user_1", 50);
      await h.expectDeniedWithout("ratelimit.*.delete_override", { namespace: id, identifier: "user_1" }, id);
      expect((await limitOf(id, "user_1")).limit).toBe(50);
    });
  });

  describe("404", () => {
    test("an identifier with no override of its own, even when a wildcard covers it", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      await setOverride(h, ns, "premium_*", 50);
      expectError(h, await h.post(url, { namespace: ns, identifier: "premium_1" }), 404, OVERRIDE_NOT_FOUND, OVERRIDE_NOT_FOUND_DETAIL);
    });

    test("an override already deleted", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      await setOverride(h, ns, "once", 50);
      expect((await h.post(url, { namespace: ns, identifier: "once" })).status).toBe(200);
      expectError(h, await h.post(url, { namespace: ns, identifier: "once" }), 404, OVERRIDE_NOT_FOUND);
    });

    test("an unknown namespace, or one of another workspace", async () => {
      expectError(h, await h.post(url, { namespace: uniq("ns"), identifier: "x" }), 404, NS_NOT_FOUND);
      const id = await createNamespace(h);
      await setOverride(h, id, "x", 1);
      const foreign = await otherWorkspaceRootKey(h, uniq("ws"));
      expectError(h, await h.post(url, { namespace: id, identifier: "x" }, { key: foreign }), 404, NS_NOT_FOUND);
    });
  });
}
