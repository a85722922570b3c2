/** rootKeys.whoami: any valid root key learns its id, name, workspace, grants and the analytics switches. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND, TEST_ACTOR } from "../../../support/contract.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const whoami = (key: string | null, body: unknown = {}) => h.post("/v2/rootKeys.whoami", body, { key });

describe("200", () => {
  test("a key without any grant: its id, name and workspace; no permissions; analytics recorded but not queryable", async () => {
    const key = await h.rootKeyWith([]);
    const res = await whoami(key);
    expect(res.status).toBe(200);
    const ws = await h.running.services.workspaces.get("default");
    expect(res.body.data).toEqual({
      rootKeyId: expect.stringMatching(/^rk_/), name: "test", workspace: { id: ws.id, name: "default" }, permissions: [],
      analytics: { recording: true, querying: false }, quotas: expect.any(Array),
    });
  });

  test("quotas: the workspace's use of each quota against its limit and variable", async () => {
    const before = (await whoami(h.rootKey)).body.data.quotas;
    expect(before.map((q: { quota: string; variable: string }) => [q.quota, q.variable])).toEqual([
      ["keys", "TOLLGATE_WORKSPACE_MAX_KEYS"], ["identities", "TOLLGATE_WORKSPACE_MAX_IDENTITIES"],
      ["permissions", "TOLLGATE_WORKSPACE_MAX_PERMISSIONS"], ["roles", "TOLLGATE_WORKSPACE_MAX_ROLES"],
      ["namespaces", "TOLLGATE_WORKSPACE_MAX_NAMESPACES"], ["storage", "TOLLGATE_WORKSPACE_STORAGE_MB"],
    ]);
    expect(before[0].limit).toBe(1_000_000);
    expect(before[5].limit).toBe(1024 * 1024 * 1024);
    expect((await h.post("/v2/identities.createIdentity", { externalId: "whoami_counted" })).status).toBe(200);
    const after = (await whoami(h.rootKey)).body.data.quotas;
    expect(after[1].used).toBe(before[1].used + 1);
    expect(after[5].used).toBeGreaterThan(before[5].used);
  });

  test("an empty body answers as `{}` does", async () => {
    const res = await h.post("/v2/rootKeys.whoami", "");
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe("bootstrap");
  });

  test("permissions sorted, an `apis.` grant also listed as `api.`", async () => {
    const res = await whoami(await h.rootKeyWith(["rbac.*.read_role", "apis.api_1.read_key"]));
    expect(res.body.data.permissions).toEqual(["api.api_1.read_key", "apis.api_1.read_key", "rbac.*.read_role"]);
  });

  test("querying follows the workspace's opt-in; a key of another workspace names its own workspace", async () => {
    await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    expect((await whoami(h.rootKey)).body.data.analytics).toEqual({ recording: true, querying: true });
    const other = await whoami(await otherWorkspaceRootKey(h, "whoami-other"));
    expect(other.body.data.workspace.name).toBe("whoami-other");
    expect(other.body.data.analytics.querying).toBe(false);
  });

  test("recording is false when the service records no verifications (TOLLGATE_ANALYTICS=off)", async () => {
    const off = await startHarness({ env: { TOLLGATE_ANALYTICS: "off" } });
    try {
      const res = await off.post("/v2/rootKeys.whoami", {});
      expect(res.body.data.analytics.recording).toBe(false);
    } finally {
      await off.stop();
    }
  });
});

describe("4xx", () => {
  test("401: an unknown root key", async () => {
    expectError(h, await whoami("tg_unknown_0000000000"), 401, ROOT_KEY_NOT_FOUND);
  });

  test("400: an unknown body field", async () => {
    expectInvalid(h, await whoami(h.rootKey, { keyId: "x" }), "body.keyId");
  });
});
