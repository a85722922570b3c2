import { afterEach, beforeEach, expect, test } from "bun:test";
import { auditPruneJob, runAuditPruneOnce } from "../../src/jobs/audit.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { TEST_ACTOR } from "../support/contract.ts";

const DAY_MS = 86_400_000;

let h: Harness;
beforeEach(async () => { h = await startHarness({ startMs: Date.UTC(2026, 0, 1) }); });
afterEach(async () => { await h.stop(); });

const stored = () => h.embedded.storage.sqlite.query<{ id: string }, []>("SELECT id FROM audit_logs ORDER BY time, id").all().map((r) => r.id);
const prune = () => runAuditPruneOnce({ audit: h.running.services.audit }, h.clock.now());

test("deletes exactly the entries older than retention (90 days by default), in every workspace", async () => {
  await h.running.services.workspaces.create({ name: "second" }, TEST_ACTOR);
  const bootstrap = stored();
  expect(bootstrap).toHaveLength(3);
  h.clock.advance(DAY_MS);
  await h.post("/v2/apis.createApi", { name: "kept" });
  const kept = stored().filter((id) => !bootstrap.includes(id));
  expect(kept).toHaveLength(1);

  h.clock.set(Date.UTC(2026, 0, 1) + 90 * DAY_MS);
  expect(await prune()).toBe(0);
  h.clock.advance(1);
  expect(await prune()).toBe(bootstrap.length);
  expect(stored()).toEqual(kept);
  expect(await prune()).toBe(0);
});

test("a pruned entry is 404 like any expired one", async () => {
  await h.post("/v2/apis.createApi", { name: "gone" });
  const logId = (await h.post("/v2/audit.listLogs", { event: "api.create" })).body.data[0].logId;
  h.clock.advance(91 * DAY_MS);
  await prune();
  h.clock.set(Date.UTC(2026, 0, 1));
  // Even with the clock set back, the entry is gone for good.
  expect((await h.post("/v2/audit.getLog", { logId })).status).toBe(404);
});

test("runs daily on the scheduler (UTC), pruning at the clock's time", async () => {
  const job = auditPruneJob({ audit: h.running.services.audit }, h.clock);
  expect(job.pattern).toBe("10 0 * * *");
  h.clock.advance(91 * DAY_MS);
  await job.run(h.clock.now());
  expect(stored()).toEqual([]);
});
