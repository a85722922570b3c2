/**
 * The window memory caps through the API (TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB = 2,
 * TOLLGATE_RATELIMIT_MEMORY_MB = 3): a workspace filling its share with long identifiers, through
 * ratelimit.multiLimit and verifyKey's ad-hoc limits, loses only its own least recently used
 * windows; once a second workspace fills the rest of the total, a third is answered without state, counted in
 * /metrics; nobody else's counts are lost.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { createApi, createKey, otherWorkspaceRootKey } from "../../../support/contract.ts";
import { MINUTE } from "./support.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";

/** The memory caps are the in-memory windows' (TOLLGATE_RATELIMIT_MEMORY_MB); a cluster's windows live in Redis, bounded by its own memory policy. */
const inMemoryWindows = embeddedOnly("the windows' memory caps bound in-memory windows; a cluster's are in Redis");

let h: Harness;
let keyB: string;
let keyC: string;
beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB: "2", TOLLGATE_RATELIMIT_MEMORY_MB: "3" } });
  keyB = await otherWorkspaceRootKey(h, "caps-b");
  keyC = await otherWorkspaceRootKey(h, "caps-c");
});
afterAll(async () => { await h.stop(); });

const check = (namespace: string, identifier: string, cost = 1) => ({ namespace, identifier, limit: 10, duration: MINUTE, cost });

async function remaining(namespace: string, identifier: string, key?: string): Promise<number> {
  const res = await h.post("/v2/ratelimit.limit", check(namespace, identifier, 0), key === undefined ? {} : { key });
  expect(res.status).toBe(200);
  return res.body.data.remaining as number;
}

/** About 1.2 MiB of windows as the limiter counts them: a thousand 512-character identifiers. */
async function fill(prefix: string, key?: string): Promise<void> {
  for (let request = 0; request < 10; request++) {
    const body = Array.from({ length: 100 }, (_, i) => check("fill", `${prefix}-${request}-${i}-`.padEnd(512, "x")));
    const res = await h.post("/v2/ratelimit.multiLimit", body, key === undefined ? {} : { key });
    expect(res.body.data.passed).toBe(true);
  }
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${h.url}/metrics`)).text();
  return Number(text.split("\n").find((l) => l.startsWith(`${name} `))!.split(" ")[1]);
}

describe("per-workspace cap", () => {
  inMemoryWindows("filling the default workspace restarts its own oldest counters; the other workspace's keep their counts", async () => {
    await h.post("/v2/ratelimit.limit", check("api", "a-oldest", 4));
    await h.post("/v2/ratelimit.limit", check("api", "b-user", 3), { key: keyB });
    await fill("a");
    await fill("a1");
    const apiId = await createApi(h, "caps");
    const { key } = await createKey(h, { apiId });
    const verifier = await h.rootKeyWith(["api.*.verify_key"]);
    for (let i = 0; i < 5; i++) {
      const ratelimits = Array.from({ length: 50 }, (_, j) => ({ name: `adhoc-${i}-${j}-`.padEnd(255, "y"), limit: 5, duration: MINUTE }));
      expect((await h.post("/v2/keys.verifyKey", { key, ratelimits }, { key: verifier })).body.data.code).toBe("VALID");
    }
    expect(await remaining("api", "a-oldest")).toBe(10);
    expect(await remaining("api", "b-user", keyB)).toBe(7);
    expect(await metric("tollgate_ratelimit_windows_evicted_total")).toBeGreaterThan(0);
    expect(await metric("tollgate_ratelimit_window_bytes")).toBeLessThanOrEqual(3 * 1024 * 1024);
  });
});

describe("total cap", () => {
  inMemoryWindows("with the total full, a third workspace is answered without state and nobody's window is lost", async () => {
    await h.post("/v2/ratelimit.limit", check("api", "a-kept", 5));
    await fill("b", keyB); // the default workspace holds its 2 MiB: the second takes the rest of the 3
    await h.post("/v2/ratelimit.limit", check("api", "b-kept", 3), { key: keyB }); // B gives up its own oldest for it
    const unkeptBefore = await metric("tollgate_ratelimit_windows_unkept_total");
    for (let i = 0; i < 3; i++) {
      const res = await h.post("/v2/ratelimit.limit", check("api", "c-user".padEnd(512, "z"), 4), { key: keyC });
      expect(res.body.data).toMatchObject({ success: true, remaining: 6 });
    }
    expect(await metric("tollgate_ratelimit_windows_unkept_total")).toBe(unkeptBefore + 3);
    expect(await remaining("api", "a-kept")).toBe(5);
    expect(await remaining("api", "b-kept", keyB)).toBe(7);
  });
});
