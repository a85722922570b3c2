/**
 * A key that holds more permission rows than one statement gathers (loaded in slices in embedded
 * mode, many-permissions.ts) answers exactly as a small key does: exact names, names held only
 * through a role, wildcards, AND/OR, its full sorted list; a change during or after a load shows in
 * the next verification. Also the pieces: merging sorted runs, the snapshot's size estimate.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256Base64 } from "../../../src/lib/hashing.ts";
import { RawJson } from "../../../src/lib/raw-json.ts";
import { ManyPermissionLoads, SLICED_LOAD_MIN_ROWS } from "../../../src/services/verification/many-permissions.ts";
import { SortedRuns } from "../../../src/services/verification/permission-set.ts";
import { SnapshotLoader } from "../../../src/services/verification/snapshot.ts";
import { startHarness, type Harness } from "../../support/harness.ts";
import { createApi, createKey, createRole } from "../../support/contract.ts";
import { embeddedOnly } from "../../support/cluster-backend.ts";

const ROLES = ["heavy-0", "heavy-1", "heavy-2"];
/** Role r holds 1,000 names; neighbouring roles share 500 of them, so the union has 2,000 + the direct ones. */
const roleSlugs = (r: number): string[] => Array.from({ length: 1000 }, (_, p) => `svc.n${r * 500 + p}.read`);
const DIRECT = ["direct.only", "wild.*"];
const expectedList = [...new Set([...ROLES.flatMap((_, r) => roleSlugs(r)), ...DIRECT])].sort();

let h: Harness;
let apiId: string;
let heavy: { keyId: string; key: string };

beforeAll(async () => {
  h = await startHarness();
  apiId = await createApi(h, "heavy");
  // A role's permissions are created a quarter at a time: creating 1,000 in one call can outlast a loaded PostgreSQL's timeout.
  for (const [r, name] of ROLES.entries()) {
    await createRole(h, name);
    for (let upTo = 250; upTo <= 1000; upTo += 250) {
      const res = await h.post("/v2/permissions.setRolePermissions", { role: name, permissions: roleSlugs(r).slice(0, upTo) });
      expect(res.status).toBe(200);
    }
  }
  heavy = await createKey(h, { apiId, roles: ROLES, permissions: DIRECT });
}, 60_000);
afterAll(async () => { await h?.stop(); });

const verify = async (key: string, permissions?: string) => {
  const res = await h.post("/v2/keys.verifyKey", permissions === undefined ? { key } : { key, permissions });
  expect(res.status).toBe(200);
  return res.body.data as { code: string; permissions?: string[]; roles?: string[] };
};

describe("a key holding thousands of permissions", () => {
  test("holds more rows than one statement gathers", () => {
    expect(ROLES.length * 1000 + DIRECT.length).toBeGreaterThanOrEqual(SLICED_LOAD_MIN_ROWS);
  });

  test("answers exact names, names held only through one role, wildcards, AND and OR as a small key would", async () => {
    const cases: Array<[string, string]> = [
      ["svc.n0.read", "VALID"],
      ["svc.n1999.read", "VALID"],
      ["svc.n2000.read", "INSUFFICIENT_PERMISSIONS"],
      ["svc.n1499.read AND svc.n0.read AND direct.only", "VALID"],
      ["svc.n0.read AND svc.n2000.read", "INSUFFICIENT_PERMISSIONS"],
      ["svc.n2000.read OR svc.n1750.read", "VALID"],
      ["nothing.held OR (direct.only AND svc.n1.read)", "VALID"],
      ["wild.anything.below", "VALID"],
      ["wild", "INSUFFICIENT_PERMISSIONS"],
      ["svc.*", "INSUFFICIENT_PERMISSIONS"],
      ["SVC.n0.read", "INSUFFICIENT_PERMISSIONS"],
    ];
    for (const [query, code] of cases) expect({ query, code: (await verify(heavy.key, query)).code }).toEqual({ query, code });
  });

  test("lists every permission once, sorted, and its roles", async () => {
    const data = await verify(heavy.key, "svc.n0.read");
    expect(data.permissions).toEqual(expectedList);
    expect(data.roles).toEqual(ROLES);
  });

  test("many verifications of a cold key at once all get the full answer", async () => {
    const k = await createKey(h, { apiId, roles: ROLES });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => verify(k.key, i % 2 === 0 ? "svc.n1999.read" : "direct.only")));
    expect(answers.map((a) => a.code)).toEqual(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? "VALID" : "INSUFFICIENT_PERMISSIONS")));
    expect(answers.every((a) => a.permissions?.length === 2000)).toBe(true);
  });

  test("a role removed while the key loads, or after, is gone from the next verification", async () => {
    const k = await createKey(h, { apiId, roles: ROLES });
    const during = verify(k.key, "svc.n0.read");
    expect((await h.post("/v2/keys.removeRoles", { keyId: k.keyId, roles: ["heavy-0"] })).status).toBe(200);
    expect((await verify(k.key, "svc.n0.read")).code).toBe("INSUFFICIENT_PERMISSIONS");
    expect(["VALID", "INSUFFICIENT_PERMISSIONS"]).toContain((await during).code);
    expect((await verify(k.key, "svc.n500.read")).code).toBe("VALID");
    expect((await verify(k.key, "svc.n0.read")).permissions).toEqual(ROLES.slice(1).flatMap((_, i) => roleSlugs(i + 1)).filter((s, i, all) => all.indexOf(s) === i).sort());
  });
});

const embeddedTest = embeddedOnly("reads the embedded mode's SQLite database");

describe("the embedded snapshot of a heavy key", () => {
  embeddedTest("is loaded in slices, keeps its list as text for answers and counts that text in its size", async () => {
    const loader = new SnapshotLoader(h.embedded.storage.sqlite, { pendingOf: () => 0 }, 16 * 1024 * 1024);
    const loading = loader.load(sha256Base64(heavy.key));
    expect(loading).toBeInstanceOf(Promise);
    const snap = (await loading)!;
    expect(snap.permissions).toEqual(expectedList);
    expect(snap.answer.permissions).toBeInstanceOf(RawJson);
    const text = (snap.answer.permissions as RawJson).text;
    expect(text).toBe(JSON.stringify(expectedList));
    expect(snap.sizeBytes).toBeGreaterThan(2 * text.length + 96 * expectedList.length);
    expect(snap.held.exact.size).toBe(expectedList.length);
  });
});

describe("credits of a heavy key", () => {
  test("are spent exactly by verifications that arrive while it loads", async () => {
    const k = await createKey(h, { apiId, roles: ROLES, credits: { remaining: 5 } });
    const answers = await Promise.all(Array.from({ length: 8 }, () => h.post("/v2/keys.verifyKey", { key: k.key, permissions: "svc.n0.read" })));
    const codes = answers.map((a) => a.body.data.code as string).sort();
    expect(codes).toEqual([...Array(5).fill("VALID"), ...Array(3).fill("USAGE_EXCEEDED")].sort());
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data).toMatchObject({ code: "USAGE_EXCEEDED", credits: 0 });
  });
});

describe("loads in slices", () => {
  embeddedTest("run at most as many at a time as allowed, the others in turn", async () => {
    // Turns of the event loop, counted: a load reads a slice a turn, so one that waited for another starts turns later.
    let turn = 0;
    let counting = true;
    const count = () => { turn++; if (counting) setImmediate(count); };
    setImmediate(count);
    const startedAt = async (allowed: number): Promise<number[]> => {
      const loads = new ManyPermissionLoads(h.embedded.storage.sqlite.filename, allowed);
      const reads: number[] = [];
      const load = () => loads.load((db) => {
        reads.push(turn);
        return db.query<{ id: string }, [string]>("SELECT id FROM keys WHERE id = ?1").get(heavy.keyId);
      }, (row) => row.id).then((loaded) => loaded?.many?.permissions.length);
      expect(await Promise.all([load(), load(), load()])).toEqual([expectedList.length, expectedList.length, expectedList.length]);
      return reads.map((t) => t - reads[0]!);
    };
    expect(await startedAt(3)).toEqual([0, 0, 0]);
    const oneAtATime = await startedAt(1);
    counting = false;
    expect(oneAtATime[1]).toBeGreaterThanOrEqual(ROLES.length);
    expect(oneAtATime[2]! - oneAtATime[1]!).toBeGreaterThanOrEqual(ROLES.length);
  });
});

describe("merging sorted runs", () => {
  test("gives every name once, in byte order, whatever the runs' sizes and overlaps", () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 50; round++) {
      const runs = new SortedRuns();
      const all = new Set<string>();
      for (let r = 0, n = 1 + Math.floor(random() * 20); r < n; r++) {
        const run = [...new Set(Array.from({ length: Math.floor(random() * 300) }, () => `${random() < 0.5 ? "A" : "a"}.${Math.floor(random() * 500)}`))].sort();
        run.forEach((name) => all.add(name));
        runs.push(run);
      }
      while (runs.mergeTop());
      expect(runs.result).toEqual([...all].sort());
    }
  });
});
