/** The `getOverride` contract, the same in both path families. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { INSUFFICIENT, allGrantsExcept, expectError, expectInvalid, otherWorkspaceRootKey } from "../../../support/contract.ts";
import {
  createNamespace, expectData, type Family, insertDeletedNamespace, MINUTE, NS_NOT_FOUND, NS_NOT_FOUND_DETAIL, OVERRIDE_NOT_FOUND,
  OVERRIDE_NOT_FOUND_DETAIL, path, setOverride, uniq,
} from "./support.ts";

export function getOverrideContract(family: Family): void {
  const url = path(family, "getOverride");
  let h: Harness;
  let ns: string;
  let nsId: string;
  let exactId: string;
  let wildcardId: string;
  beforeAll(async () => {
    h = await startHarness();
    ns = uniq("ns");
    nsId = await createNamespace(h, ns);
    exactId = await setOverride(h, ns, "premium_vip", 1000, 2 * MINUTE);
    wildcardId = await setOverride(h, ns, "premium_*", 100);
  });
  afterAll(async () => { await h.stop(); });

  describe("200", () => {
    test("an exact identifier: data is exactly {overrideId, identifier, limit, duration}", async () => {
      expectData(await h.post(url, { namespace: ns, identifier: "premium_vip" }), { overrideId: exactId, identifier: "premium_vip", limit: 1000, duration: 2 * MINUTE });
    });

    test("a concrete identifier finds the wildcard override that applies to it", async () => {
      expectData(await h.post(url, { namespace: ns, identifier: "premium_42" }), { overrideId: wildcardId, identifier: "premium_*", limit: 100, duration: MINUTE });
    });

    test("the pattern itself, and the namespace by id", async () => {
      expect((await h.post(url, { namespace: nsId, identifier: "premium_*" })).body.data.overrideId).toBe(wildcardId);
    });

    test("`ratelimit.<namespaceId>.read_override` is enough", async () => {
      const res = await h.post(url, { namespace: ns, identifier: "premium_vip" }, { key: await h.rootKeyWith([`ratelimit.${nsId}.read_override`]) });
      expect(res.body.data.overrideId).toBe(exactId);
    });
  });

  describe("400", () => {
    test("missing identifier", async () => {
      expectInvalid(h, await h.post(url, { namespace: ns }), "body.identifier");
    });

    test("empty namespace", async () => {
      expectInvalid(h, await h.post(url, { namespace: "", identifier: "x" }), "body.namespace");
    });

    test("unknown field", async () => {
      expectInvalid(h, await h.post(url, { namespace: ns, identifier: "x", limit: 1 }), "body.limit");
    });
  });

  describe("403", () => {
    test("without `read_override` (DECISIONS: a missing permission is 403, naming it)", async () => {
      const res = await h.post(url, { namespace: ns, identifier: "premium_vip" }, { key: await h.rootKeyWith(allGrantsExcept("ratelimit.*.read_override")) });
      expectError(h, res, 403, INSUFFICIENT);
      expect(res.body.error.detail).toContain("'ratelimit.*.read_override'");
    });
  });

  describe("404", () => {
    test("no override matches", async () => {
      expectError(h, await h.post(url, { namespace: ns, identifier: "basic_1" }), 404, OVERRIDE_NOT_FOUND, OVERRIDE_NOT_FOUND_DETAIL);
    });


    test("a deleted override", async () => {
      await setOverride(h, ns, "temp", 1);
      expect((await h.post("/v2/ratelimit.deleteOverride", { namespace: ns, identifier: "temp" })).status).toBe(200);
      expectError(h, await h.post(url, { namespace: ns, identifier: "temp" }), 404, OVERRIDE_NOT_FOUND);
    });

    test("an unknown or deleted namespace", async () => {
      expectError(h, await h.post(url, { namespace: uniq("ns"), identifier: "x" }), 404, NS_NOT_FOUND, NS_NOT_FOUND_DETAIL);
      const gone = uniq("gone");
      await insertDeletedNamespace(h, gone);
      expectError(h, await h.post(url, { namespace: gone, identifier: "x" }), 404, NS_NOT_FOUND, NS_NOT_FOUND_DETAIL);
    });

    test("a namespace of another workspace", async () => {
      const foreign = await otherWorkspaceRootKey(h, uniq("ws"));
      expectError(h, await h.post(url, { namespace: nsId, identifier: "premium_vip" }, { key: foreign }), 404, NS_NOT_FOUND);
    });
  });
}
