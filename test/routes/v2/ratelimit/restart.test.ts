/**
 * Rate-limit windows survive a restart: a graceful stop flushes every count, a crash loses at most
 * what changed since the last periodic flush. The TestClock does not move across the restarts.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boot } from "../../../../src/boot.ts";
import { loadConfig } from "../../../../src/config.ts";
import { silentLogger } from "../../../../src/lib/logger.ts";
import { RatelimitStore } from "../../../../src/services/ratelimit/index.ts";
import { backupDatabase } from "../../../../src/storage/backup.ts";
import { testServer } from "../../../support/route-contract.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";
import { createApi, createKey } from "../../../support/contract.ts";
import { MINUTE, uniq } from "./support.ts";

const h = testServer();

const limitBody = (namespace: string, identifier: string) => ({ namespace, identifier, limit: 3, duration: MINUTE });

async function useUp(namespace: string, identifier: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await h.post("/v2/ratelimit.limit", limitBody(namespace, identifier))).body.data.success).toBe(true);
}

describe("graceful restart (SIGTERM path: stop, then boot on the same data dir)", () => {
  test("a used-up window of ratelimit.limit is still used up, on both path families", async () => {
    const ns = uniq("ns");
    await useUp(ns, "user_1");
    const before = h.clock.now();
    await h.restart();
    expect(h.clock.now()).toBe(before);
    expect((await h.post("/v2/ratelimit.limit", limitBody(ns, "user_1"))).body.data).toMatchObject({ success: false, remaining: 0 });
    expect((await h.post("/v2/ratelimits.limit", limitBody(ns, "user_1"))).body.data.success).toBe(false);
    expect((await h.post("/v2/ratelimit.limit", limitBody(ns, "user_2"))).body.data.success).toBe(true);
  });

  test("a partly used window keeps its exact count", async () => {
    const ns = uniq("ns");
    await h.post("/v2/ratelimit.limit", limitBody(ns, "partial"));
    await h.restart();
    expect((await h.post("/v2/ratelimit.limit", limitBody(ns, "partial"))).body.data.remaining).toBe(1);
  });

  test("a key's rate limit in verification is still used up", async () => {
    const apiId = await createApi(h, "restart");
    const { key } = await createKey(h, { apiId, ratelimits: [{ name: "requests", limit: 2, duration: MINUTE, autoApply: true }] });
    for (let i = 0; i < 2; i++) expect((await h.post("/v2/keys.verifyKey", { key })).body.data.code).toBe("VALID");
    await h.restart();
    expect((await h.post("/v2/keys.verifyKey", { key })).body.data.code).toBe("RATE_LIMITED");
  });

  embeddedOnly("windows kept in memory, flushed to tollgate.db")("windows whose limits have expired are not restored; live ones are", async () => {
    const ns = uniq("ns");
    await h.post("/v2/ratelimit.limit", { namespace: ns, identifier: "second", limit: 3, duration: 1000 });
    await h.post("/v2/ratelimit.limit", { namespace: ns, identifier: "minute", limit: 3, duration: MINUTE });
    new RatelimitStore({ storage: h.embedded.storage, limiter: h.embedded.limiter }).flush(h.clock.now());
    h.clock.advance(2_000);
    await h.restart();
    const { limiter } = h.embedded;
    const restored = new Set<string>();
    for (let slot = 0; slot < limiter.slotBound; slot++) restored.add(limiter.windowOf(slot)?.identifier ?? "");
    expect([restored.has("second"), restored.has("minute")]).toEqual([false, true]);
  });

  test("overrides and namespaces come back from SQLite after a restart", async () => {
    const ns = uniq("ns");
    await h.post("/v2/ratelimit.limit", limitBody(ns, "x"));
    const set = await h.post("/v2/ratelimit.setOverride", { namespace: ns, identifier: "vip_*", limit: 9, duration: MINUTE });
    await h.restart();
    expect((await h.post("/v2/ratelimit.limit", limitBody(ns, "vip_1"))).body.data).toMatchObject({ limit: 9, overrideId: set.body.data.overrideId });
  });
});

describe("crash (no stop): what the last periodic flush saved survives", () => {
  embeddedOnly("windows kept in memory; a copy of tollgate.db plays the crashed box")("counts flushed before the crash are restored; counts after it are the at-most-one-interval loss", async () => {
    const ns = uniq("ns");
    await useUp(ns, "flushed");
    // The periodic flush, run now instead of waiting for its timer.
    new RatelimitStore({ storage: h.embedded.storage, limiter: h.embedded.limiter }).flush(h.clock.now());
    await h.post("/v2/ratelimit.limit", limitBody(ns, "after-flush"));
    // What a restart after kill -9 sees: tollgate.db as committed now, while the first never
    // stopped. A copy of it, since the running first holds its data dir (one serve per data dir).
    const crashed = mkdtempSync(join(tmpdir(), "tollgate-crashed-"));
    backupDatabase(join(h.dataDir, "tollgate.db"), join(crashed, "tollgate.db"));
    const config = loadConfig({ TOLLGATE_DATA_DIR: crashed, TOLLGATE_PORT: "0" });
    const second = await boot({ config, logger: silentLogger, clock: h.clock });
    try {
      const post = (identifier: string) => fetch(`${second.url}/v2/ratelimit.limit`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${h.rootKey}` },
        body: JSON.stringify({ ...limitBody(ns, identifier), cost: 0 }),
      }).then((r) => r.json() as Promise<{ data: { remaining: number } }>);
      expect((await post("flushed")).data.remaining).toBe(0);
      expect((await post("after-flush")).data.remaining).toBe(3);
    } finally {
      await second.stop();
      rmSync(crashed, { recursive: true, force: true });
    }
  });
});
