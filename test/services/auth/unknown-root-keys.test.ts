/**
 * Root keys not found are remembered as unknown, in both modes (a lookup answered at once, as
 * SQLite's, and one answered later, as PostgreSQL's): a flood of one bad key costs one lookup per
 * TTL, the memory is bounded, and a change (a root key created) forgets them all so the key works at
 * once. In the cluster mode, lookups of distinct keys run at most `concurrentLookups` at once, a
 * bounded number wait, and the rest are refused with 503 overloaded. Lookups are counted through the
 * injected lookup, never by timing.
 */
import { describe, expect, test } from "bun:test";
import { RootKeyAuthenticator } from "../../../src/services/auth/index.ts";
import { WAITING_PER_RUNNING } from "../../../src/services/auth/lookup-gate.ts";
import type { RootKeyCredential } from "../../../src/storage/records/index.ts";
import { sha256Base64 } from "../../../src/lib/hashing.ts";
import { AppError } from "../../../src/errors/app-error.ts";
import { TestClock } from "../../support/test-clock.ts";

const BAD = "tg_root_nobody_has_this_key_0001";
const TTL_MS = 10_000;
const row = (id: string): RootKeyCredential => ({
  id, name: "ops", workspaceId: "ws_1", permissions: ["api.*.read_api"],
  enabled: true, expiresAt: null, revokedAt: null, workspaceEnabled: true,
});

function setUp(answersLater: boolean, opts: { size?: number; concurrentLookups?: number; lookup?: (hash: string) => Promise<RootKeyCredential | undefined> } = {}) {
  const rows = new Map<string, RootKeyCredential>();
  const lookups: string[] = [];
  const clock = new TestClock();
  const auth = new RootKeyAuthenticator({
    clock,
    changesElsewhere: { look: () => undefined },
    lookupAnswersLater: answersLater,
    unknown: { size: opts.size ?? 1000, ttlMs: TTL_MS },
    concurrentLookups: opts.concurrentLookups ?? 2,
    lookup: (hash) => {
      lookups.push(hash);
      if (opts.lookup) return opts.lookup(hash);
      return answersLater ? Promise.resolve(rows.get(hash)) : rows.get(hash);
    },
  });
  /** One request's authentication as the pipeline runs it: prepare (when it has to wait), then authenticate. */
  const request = async (token: string) => {
    const header = `Bearer ${token}`;
    const prepared = await auth.prepare(header);
    return auth.authenticate(header, {}, prepared);
  };
  const status = async (token: string) => {
    try {
      await request(token);
      return 200;
    } catch (error) {
      const code = (error as AppError).code;
      return code === "root_key_not_found" ? 401 : code === "overloaded" ? 503 : code;
    }
  };
  return { auth, rows, lookups, clock, request, status };
}

for (const [mode, answersLater] of [["a lookup answered at once (embedded)", false], ["a lookup answered later (cluster)", true]] as const) {
  describe(mode, () => {
    test("200 requests with one unknown root key, all at once, cost one lookup; after the TTL, one more", async () => {
      const { lookups, clock, status } = setUp(answersLater);
      const answers = await Promise.all(Array.from({ length: 200 }, () => status(BAD)));
      expect(answers.every((s) => s === 401)).toBe(true);
      expect(lookups).toHaveLength(1);
      for (let i = 0; i < 50; i++) expect(await status(BAD)).toBe(401);
      expect(lookups).toHaveLength(1);
      clock.advance(TTL_MS);
      expect(await status(BAD)).toBe(401);
      expect(lookups).toHaveLength(2);
    });

    test("a root key created after its hash was remembered as unknown works at once", async () => {
      const { auth, rows, status } = setUp(answersLater);
      expect(await status(BAD)).toBe(401);
      rows.set(sha256Base64(BAD), row("rk_new"));
      // What the workspace service (and, from another node, the change notices) call on a change.
      auth.invalidate();
      expect(await status(BAD)).toBe(200);
    });

    test("the hashes remembered are bounded: the least recently used go first", async () => {
      const { auth, lookups, status } = setUp(answersLater, { size: 3 });
      for (let i = 0; i < 10; i++) expect(await status(`tg_root_unknown_${i}_padding_0000`)).toBe(401);
      expect(auth.lookups.unknownHashes).toBe(3);
      expect(await status("tg_root_unknown_9_padding_0000")).toBe(401);
      expect(lookups).toHaveLength(10);
      expect(await status("tg_root_unknown_0_padding_0000")).toBe(401);
      expect(lookups).toHaveLength(11);
    });
  });
}

describe("lookups answered later (cluster)", () => {
  test("a lookup that was in flight when root keys changed does not remember its key as unknown", async () => {
    let answer: (row: RootKeyCredential | undefined) => void = () => undefined;
    const { auth, lookups, status } = setUp(true, { lookup: () => new Promise((resolve) => { answer = resolve; }) });
    const first = status(BAD);
    await Promise.resolve();
    auth.invalidate();
    answer(undefined);
    expect(await first).toBe(401);
    expect(auth.lookups.unknownHashes).toBe(0);
    const second = status(BAD);
    answer(row("rk_new"));
    expect(await second).toBe(200);
    expect(lookups).toHaveLength(2);
  });

  test("distinct unknown keys: at most concurrentLookups run, a bounded number wait, the rest get 503 overloaded", async () => {
    const running = 2;
    const pending: Array<() => void> = [];
    let inLookup = 0;
    let most = 0;
    const { lookups, status } = setUp(true, {
      concurrentLookups: running,
      lookup: () => new Promise((resolve) => {
        inLookup++;
        most = Math.max(most, inLookup);
        pending.push(() => {
          inLookup--;
          resolve(undefined);
        });
      }),
    });
    const admitted = running * (1 + WAITING_PER_RUNNING);
    const answers = Array.from({ length: admitted + 5 }, (_, i) => status(`tg_root_distinct_${i}_padding_000`));
    const refused = await Promise.all(answers.slice(admitted));
    expect(refused).toEqual(Array(5).fill(503));
    while (pending.length > 0 || lookups.length < admitted) {
      pending.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await Promise.all(answers.slice(0, admitted))).every((s) => s === 401)).toBe(true);
    expect(most).toBe(running);
    expect(lookups).toHaveLength(admitted);
  });
});
