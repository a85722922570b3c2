import { describe, expect, test } from "bun:test";
import { startHarness } from "../../../support/harness.ts";
import { routeContract } from "../../../support/route-contract.ts";
import { allGrantsExcept, expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey, TEST_ACTOR } from "../../../support/contract.ts";

const NOT_FOUND = "service/data/audit_log_not_found";
const DAY_MS = 86_400_000;

const h = routeContract("/v2/audit.getLog");

/** Creates an API with `key` and extra headers; returns the id of its `api.create` entry. */
async function apiCreatedLog(name: string, opts: { key?: string; headers?: Record<string, string> } = {}): Promise<{ apiId: string; logId: string }> {
  const res = await h.post("/v2/apis.createApi", { name }, opts);
  expect(res.status).toBe(200);
  const apiId = res.body.data.apiId as string;
  const list = await h.post("/v2/audit.listLogs", { resourceId: apiId, event: "api.create" });
  return { apiId, logId: list.body.data[0].logId };
}

describe("200", () => {
  test("the entry: id, time, event, actor, resources, description, remote IP and user agent", async () => {
    const { id: rootKeyId, key } = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "deployer", permissions: ["api.*.create_api"] }, TEST_ACTOR);
    const { apiId, logId } = await apiCreatedLog("orders", { key, headers: { "user-agent": "deploy-bot/1.0" } });
    const res = await h.post("/v2/audit.getLog", { logId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { requestId: expect.stringMatching(/^req_/) },
      data: {
        logId,
        time: h.clock.now(),
        event: "api.create",
        actor: { type: "root_key", id: rootKeyId, name: "deployer" },
        resources: [{ type: "api", id: apiId, name: "orders" }, { type: "keySpace", id: expect.stringMatching(/^ks_/) }],
        description: "Created API orders",
        remoteIp: "127.0.0.1",
        userAgent: "deploy-bot/1.0",
      },
    });
  });

  test("X-Forwarded-For from loopback is not believed by default: remoteIp is the connection's peer", async () => {
    const { logId } = await apiCreatedLog("spoof", { headers: { "x-forwarded-for": "203.0.113.66" } });
    const res = await h.post("/v2/audit.getLog", { logId });
    expect(res.body.data.remoteIp).toBe("127.0.0.1");
  });

  test("behind a proxy named in TOLLGATE_TRUSTED_PROXIES, remoteIp is the address the proxy appended", async () => {
    const proxied = await startHarness({ env: { TOLLGATE_TRUSTED_PROXIES: "127.0.0.0/8,::1" } });
    try {
      const created = await proxied.post("/v2/apis.createApi", { name: "proxied" }, { headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.7" } });
      const list = await proxied.post("/v2/audit.listLogs", { resourceId: created.body.data.apiId });
      expect(list.body.data[0].remoteIp).toBe("203.0.113.7");
    } finally {
      await proxied.stop();
    }
  });

  test("a 10,000-character User-Agent is stored cut to its first 256 characters", async () => {
    const userAgent = "agent/1.0 ".repeat(1000);
    const { logId } = await apiCreatedLog("long-agent", { headers: { "user-agent": userAgent } });
    const res = await h.post("/v2/audit.getLog", { logId });
    expect(res.body.data.userAgent).toBe(userAgent.slice(0, 256));
  });

  test("an entry written by the CLI has actor type cli", async () => {
    await h.running.services.workspaces.setAnalytics("default", true, { type: "cli", id: "cli", name: "tollgate CLI" });
    const list = await h.post("/v2/audit.listLogs", { event: "workspace.update", limit: 1 });
    const res = await h.post("/v2/audit.getLog", { logId: list.body.data[0].logId });
    expect(res.body.data).toMatchObject({ event: "workspace.update", actor: { type: "cli", id: "cli", name: "tollgate CLI" }, description: "Turned analytics on" });
  });

  test("an entry is still there on the last day of retention", async () => {
    const { logId } = await apiCreatedLog("lasting");
    h.clock.advance(90 * DAY_MS);
    expect((await h.post("/v2/audit.getLog", { logId })).status).toBe(200);
  });
});

describe("400", () => {
  test("logId missing", async () => {
    expectInvalid(h, await h.post("/v2/audit.getLog", {}), "body.logId");
  });

  test("logId shorter than 3 or with characters outside [a-zA-Z0-9_]", async () => {
    expectInvalid(h, await h.post("/v2/audit.getLog", { logId: "lo" }), "body.logId");
    expectInvalid(h, await h.post("/v2/audit.getLog", { logId: "log-1" }), "body.logId");
  });

  test("logId not a string", async () => {
    expectInvalid(h, await h.post("/v2/audit.getLog", { logId: 12345 }), "body.logId");
  });

  test("an unknown field", async () => {
    expectInvalid(h, await h.post("/v2/audit.getLog", { logId: "log_x12", since: 1 }), "body.since");
  });
});

describe("403", () => {
  test("without audit.*.read_log, naming the permission", async () => {
    const { logId } = await apiCreatedLog("guarded");
    const res = await h.post("/v2/audit.getLog", { logId }, { key: await h.rootKeyWith(allGrantsExcept("audit.*.read_log")) });
    expectError(h, res, 403, INSUFFICIENT);
    expect(res.body.error.detail).toContain("'audit.*.read_log'");
  });
});

describe("404", () => {
  test("an unknown logId: the spec's error, exactly", async () => {
    const res = await h.post("/v2/audit.getLog", { logId: "log_doesnotexist" });
    expectError(h, res, 404, NOT_FOUND, "The requested audit log entry does not exist.");
    expect(res.body.error.title).toBe("Not Found");
  });

  test("an entry of another workspace, even for a fully privileged root key there", async () => {
    const { logId } = await apiCreatedLog("private");
    expectError(h, await h.post("/v2/audit.getLog", { logId }, { key: await otherWorkspaceRootKey(h, "snoop") }), 404, NOT_FOUND);
    expect((await h.post("/v2/audit.getLog", { logId })).status).toBe(200);
  });

  test("an entry past retention (90 days by default), before the prune removed it", async () => {
    const { logId } = await apiCreatedLog("fading");
    h.clock.advance(90 * DAY_MS + 1);
    expectError(h, await h.post("/v2/audit.getLog", { logId }), 404, NOT_FOUND);
    expect(await h.records.count("audit_logs", "id = ?", logId)).toBe(1);
  });
});

describe("configuration", () => {
  test("under TOLLGATE_DOCS_URL the 404 type is exactly {docs_url}/api-reference/errors-v2/service/data/audit_log_not_found", async () => {
    const other = await startHarness({ env: { TOLLGATE_DOCS_URL: "https://docs.example.com" } });
    try {
      const res = await other.post("/v2/audit.getLog", { logId: "log_doesnotexist" });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        status: 404, title: "Not Found", type: "https://docs.example.com/api-reference/errors-v2/service/data/audit_log_not_found",
      });
    } finally {
      await other.stop();
    }
  });

  test("TOLLGATE_AUDIT_RETENTION_DAYS shortens retention", async () => {
    const short = await startHarness({ env: { TOLLGATE_AUDIT_RETENTION_DAYS: "1" } });
    try {
      const created = await short.post("/v2/apis.createApi", { name: "brief" });
      const logId = (await short.post("/v2/audit.listLogs", { resourceId: created.body.data.apiId })).body.data[0].logId;
      short.clock.advance(DAY_MS);
      expect((await short.post("/v2/audit.getLog", { logId })).status).toBe(200);
      short.clock.advance(1);
      expectError(short, await short.post("/v2/audit.getLog", { logId }), 404, NOT_FOUND);
    } finally {
      await short.stop();
    }
  });
});
