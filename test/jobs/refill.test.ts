import { afterEach, describe, expect, test } from "bun:test";
import { lastRefillDueMs } from "../../src/services/keys/index.ts";
import { Cron } from "croner";
import { refillJob, runRefillOnce } from "../../src/jobs/refill.ts";
import { embeddedRecords } from "../../src/storage/records/index.ts";
import { answered } from "../../src/storage/work.ts";
import { startHarness, type Harness } from "../support/harness.ts";

const utc = (y: number, m: number, d: number, h = 0) => Date.UTC(y, m - 1, d, h);

describe("lastRefillDueMs", () => {
  test("daily keys are due at today's 00:00 UTC", () => {
    expect(lastRefillDueMs(utc(2026, 3, 10, 13), null)).toBe(utc(2026, 3, 10));
    expect(lastRefillDueMs(utc(2026, 3, 10), null)).toBe(utc(2026, 3, 10));
  });
  test("monthly keys are due on their day, else the previous month's", () => {
    expect(lastRefillDueMs(utc(2026, 3, 15, 8), 15)).toBe(utc(2026, 3, 15));
    expect(lastRefillDueMs(utc(2026, 3, 14, 23), 15)).toBe(utc(2026, 2, 15));
    expect(lastRefillDueMs(utc(2026, 1, 3), 5)).toBe(utc(2025, 12, 5));
  });
  test("a refill day past the end of a short month falls on its last day", () => {
    expect(lastRefillDueMs(utc(2026, 2, 28, 1), 31)).toBe(utc(2026, 2, 28));
    expect(lastRefillDueMs(utc(2028, 2, 29, 1), 30)).toBe(utc(2028, 2, 29));
    expect(lastRefillDueMs(utc(2026, 3, 30), 31)).toBe(utc(2026, 2, 28));
    expect(lastRefillDueMs(utc(2026, 4, 30, 5), 31)).toBe(utc(2026, 4, 30));
  });
});

describe("runRefillOnce", () => {
  let h: Harness;
  afterEach(async () => { await h.stop(); });

  async function keyWith(credits: unknown): Promise<string> {
    const api = await h.post("/v2/apis.createApi", { name: "refills" });
    const key = await h.post("/v2/keys.createKey", { apiId: api.body.data.apiId, credits });
    expect(key.status).toBe(200);
    return key.body.data.key;
  }
  const verify = async (key: string, cost = 1) => (await h.post("/v2/keys.verifyKey", { key, credits: { cost } })).body.data;
  const refill = () => answered(runRefillOnce({ records: embeddedRecords(h.embedded.storage), cache: h.running.services.keyCache, credits: h.running.services.credits }, h.clock.now()));

  test("a daily refill sets remaining to the amount at the next midnight, once", async () => {
    h = await startHarness({ startMs: utc(2026, 5, 1, 12) });
    const key = await keyWith({ remaining: 3, refill: { interval: "daily", amount: 5 } });
    expect(await verify(key, 3)).toMatchObject({ valid: true, credits: 0 });
    expect(await verify(key)).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", credits: 0 });
    expect(refill()).toBe(0);
    h.clock.set(utc(2026, 5, 2));
    expect(refill()).toBe(1);
    expect(refill()).toBe(0);
    expect(await verify(key)).toMatchObject({ valid: true, credits: 4 });
  });

  test("a refill never lowers a larger balance", async () => {
    h = await startHarness({ startMs: utc(2026, 5, 1, 12) });
    const key = await keyWith({ remaining: 50, refill: { interval: "daily", amount: 5 } });
    h.clock.set(utc(2026, 5, 2, 1));
    refill();
    expect(await verify(key, 0)).toMatchObject({ valid: true, credits: 50 });
  });

  test("a monthly refill waits for its day, even for a day past the end of the month", async () => {
    h = await startHarness({ startMs: utc(2026, 1, 20) });
    const key = await keyWith({ remaining: 1, refill: { interval: "monthly", amount: 10, refillDay: 31 } });
    expect(await verify(key)).toMatchObject({ valid: true, credits: 0 });
    h.clock.set(utc(2026, 1, 30, 23));
    expect(refill()).toBe(0);
    h.clock.set(utc(2026, 2, 10));
    expect(refill()).toBe(1);
    expect(await verify(key)).toMatchObject({ valid: true, credits: 9 });
  });

  test("refillDay 31 refills on the last day of a shorter month: Feb 28, Mar 31, Apr 30, never a day early", async () => {
    h = await startHarness({ startMs: utc(2026, 2, 1, 12) });
    const key = await keyWith({ remaining: 0, refill: { interval: "monthly", amount: 4, refillDay: 31 } });
    const spendAll = async () => expect(await verify(key, 4)).toMatchObject({ valid: true, credits: 0 });
    for (const [dayBefore, due] of [[utc(2026, 2, 27, 23), utc(2026, 2, 28)], [utc(2026, 3, 30, 23), utc(2026, 3, 31)], [utc(2026, 4, 29, 23), utc(2026, 4, 30)]] as const) {
      h.clock.set(dayBefore);
      expect(refill()).toBe(0);
      h.clock.set(due);
      expect(refill()).toBe(1);
      expect(refill()).toBe(0);
      await spendAll();
    }
    h.clock.set(utc(2026, 5, 30));
    expect(refill()).toBe(0);
  });

  test("refillDay 30 refills on Feb 29 of a leap year", async () => {
    h = await startHarness({ startMs: utc(2028, 2, 1) });
    const key = await keyWith({ remaining: 0, refill: { interval: "monthly", amount: 3, refillDay: 30 } });
    h.clock.set(utc(2028, 2, 28, 23));
    expect(refill()).toBe(0);
    h.clock.set(utc(2028, 2, 29));
    expect(refill()).toBe(1);
    expect(await verify(key, 0)).toMatchObject({ valid: true, credits: 3 });
  });

  test("a monthly key created after its day this month first refills next month", async () => {
    h = await startHarness({ startMs: utc(2026, 3, 20) });
    await keyWith({ remaining: 0, refill: { interval: "monthly", amount: 3, refillDay: 15 } });
    h.clock.set(utc(2026, 4, 14, 23));
    expect(refill()).toBe(0);
    h.clock.set(utc(2026, 4, 15));
    expect(refill()).toBe(1);
  });

  test("a refill sets the amount: it does not add, and days missed do not add up", async () => {
    h = await startHarness({ startMs: utc(2026, 5, 1, 12) });
    const key = await keyWith({ remaining: 3, refill: { interval: "daily", amount: 5 } });
    h.clock.set(utc(2026, 5, 4, 6));
    expect(refill()).toBe(1);
    expect(await verify(key, 0)).toMatchObject({ valid: true, credits: 5 });
  });

  test("a refill missed while stopped is applied at start exactly once", async () => {
    h = await startHarness({ startMs: utc(2026, 5, 1, 12) });
    const key = await keyWith({ remaining: 2, refill: { interval: "daily", amount: 2 } });
    expect(await verify(key, 2)).toMatchObject({ credits: 0 });
    h.clock.set(utc(2026, 5, 4, 9));
    await h.restart();
    expect(await verify(key, 2)).toMatchObject({ valid: true, credits: 0 });
    h.clock.set(utc(2026, 5, 4, 23));
    await h.restart();
    expect(await verify(key)).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", credits: 0 });
    expect(refill()).toBe(0);
  });

  test("the scheduled job fires at 00:00 UTC and refills what is due at the clock's time", async () => {
    h = await startHarness({ startMs: utc(2026, 5, 1, 12) });
    const key = await keyWith({ remaining: 0, refill: { interval: "daily", amount: 7 } });
    const job = refillJob({ records: embeddedRecords(h.embedded.storage), cache: h.running.services.keyCache, credits: h.running.services.credits }, h.clock);
    // The scheduler evaluates every pattern in UTC.
    const next = new Cron(job.pattern, { timezone: "UTC", paused: true }).nextRun(new Date(utc(2026, 5, 1, 12)));
    expect(next?.getTime()).toBe(utc(2026, 5, 2));
    h.clock.set(utc(2026, 5, 2));
    await job.run(h.clock.now());
    expect(await verify(key, 0)).toMatchObject({ valid: true, credits: 7 });
  });

  test("boot applies a refill that fell due while the service was stopped", async () => {
    h = await startHarness({ startMs: utc(2026, 5, 1, 12) });
    const key = await keyWith({ remaining: 1, refill: { interval: "daily", amount: 2 } });
    expect(await verify(key)).toMatchObject({ credits: 0 });
    h.clock.set(utc(2026, 5, 3, 9));
    await h.restart();
    expect(await verify(key, 0)).toMatchObject({ valid: true, credits: 2 });
  });
});
