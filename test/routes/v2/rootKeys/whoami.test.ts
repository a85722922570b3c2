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
      analytics: { recording: true, querying: false },
    });
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
