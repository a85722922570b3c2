/**
 * Every change made through the API writes exactly the expected audit entries: event, actor (the
 * calling root key), resources, remote IP and user agent (audit-mutations.ts is the table of
 * changes). Changes made by the CLI, as a child process, are recorded with actor type `cli`. No
 * entry ever holds a secret: no key string, root key, stored hash or plaintext.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createApp } from "../../src/app.ts";
import { servedRoutes } from "../support/served-routes.ts";
import { sha256Base64 } from "../../src/lib/hashing.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi } from "../support/contract.ts";
import { runCli, tableRows, tempDataDir } from "../support/cli.ts";
import { auditMutations, READ_ONLY, type MutationWorld } from "./audit-mutations.ts";

const IP = "198.51.100.23";
const UA = "audit-coverage/1.0";

let h: Harness;
let actor: { id: string; key: string };
/** Every secret handed out during the run: key strings and root keys. */
const secrets = new Set<string>();
/** Filled in by beforeAll; the mutations read it only when they run. */
const world: MutationWorld = { h: undefined as unknown as Harness, apiId: "", secrets };
const mutations = auditMutations(world);

interface Row { event: string; actor_type: string; actor_id: string; actor_name: string | null; resources: string; remote_ip: string | null; user_agent: string | null }

const lastRowid = () => h.embedded.storage.sqlite.query<{ n: number }, []>("SELECT coalesce(max(rowid), 0) AS n FROM audit_logs").get()!.n;
const rowsAfter = (rowid: number) => h.embedded.storage.sqlite.query<Row, [number]>("SELECT * FROM audit_logs WHERE rowid > ?1 ORDER BY rowid").all(rowid);
const refsOf = (row: Pick<Row, "resources">) => (JSON.parse(row.resources) as Array<{ id: string; name?: string }>).flatMap((r) => [r.id, ...(r.name ? [r.name] : [])]);

beforeAll(async () => {
  // Loopback (the test's own address) stands for a proxy here, so X-Forwarded-For is believed.
  h = await startHarness({ env: { TOLLGATE_TRUSTED_PROXIES: "127.0.0.0/8,::1" } });
  actor = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "auditor", permissions: [...ALL_GRANTS] }, { type: "cli", id: "test" });
  secrets.add(h.rootKey).add(actor.key);
  world.h = h;
  world.apiId = await createApi(h, "coverage");
});
afterAll(async () => { await h.stop(); });

test("every registered route is a mutation or READ_ONLY", () => {
  const app = createApp({ services: h.running.services, logger: silentLogger, docsUrl: () => "" });
  const mutating = new Set(mutations.map((m) => m.path));
  const unclassified = servedRoutes(app).filter((r) => r.method === "POST" && !mutating.has(r.path) && !READ_ONLY.has(r.path)).map((r) => r.path);
  expect(unclassified).toEqual([]);
});

describe("API changes: exactly the expected entries, by the calling root key, with remote IP and user agent", () => {
  for (const m of mutations) {
    test(`${m.path}: ${m.name}`, async () => {
      const { body, expected } = await m.prepare();
      const before = lastRowid();
      // A forged left part, then the address the (loopback, configured as trusted) proxy appended.
      const res = await h.post(m.path, body, { key: actor.key, headers: { "x-forwarded-for": `10.0.0.1, ${IP}`, "user-agent": UA } });
      expect(res.status).toBe(200);
      if (typeof res.body.data?.key === "string") secrets.add(res.body.data.key);
      const rows = rowsAfter(before);
      const want = expected(res.body.data);
      expect(rows.map((r) => r.event)).toEqual(want.map((w) => w.event));
      rows.forEach((row, i) => {
        expect({ type: row.actor_type, id: row.actor_id, name: row.actor_name, ip: row.remote_ip, ua: row.user_agent })
          .toEqual({ type: "root_key", id: actor.id, name: "auditor", ip: IP, ua: UA });
        expect(refsOf(row)).toEqual(expect.arrayContaining(want[i]!.refs));
      });
    });
  }
});

describe("CLI changes: actor type cli", () => {
  test("workspace create and update, root-key create and revoke, each one entry, as the real CLI makes them", async () => {
    const data = tempDataDir();
    try {
      const cli = async (...args: string[]) => {
        const r = await runCli(args, { dataDir: data.dir });
        if (r.code !== 0) throw new Error(`tollgate ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
        return r.stdout.trim();
      };
      const wsId = await cli("workspace", "create", "--name", "cli-made");
      await cli("workspace", "update", "cli-made", "--analytics", "on");
      const rootKey = await cli("root-key", "create", "--workspace", wsId, "--name", "ops", "--permission", "api.*.read_api");
      const rkId = tableRows(await cli("root-key", "list", "--workspace", wsId), ["ID", "NAME", "START", "STATE", "PERMISSIONS"])[0]![0]!;
      await cli("root-key", "revoke", rkId);
      const db = new Database(join(data.dir, "tollgate.db"), { readonly: true });
      try {
        const rows = db.query<Row & { workspace_id: string }, [string]>("SELECT * FROM audit_logs WHERE workspace_id = ?1 ORDER BY rowid").all(wsId);
        expect(rows.map((r) => [r.event, r.actor_type, r.actor_id, r.actor_name, r.remote_ip, r.user_agent])).toEqual([
          ["workspace.create", "cli", "cli", "tollgate CLI", null, null],
          ["workspace.update", "cli", "cli", "tollgate CLI", null, null],
          ["root_key.create", "cli", "cli", "tollgate CLI", null, null],
          ["root_key.revoke", "cli", "cli", "tollgate CLI", null, null],
        ]);
        expect(rows.map(refsOf)).toEqual([[wsId, "cli-made"], [wsId, "cli-made"], [rkId, "ops"], [rkId, "ops"]]);
        const dump = JSON.stringify(db.query("SELECT * FROM audit_logs").all());
        expect(dump).not.toContain(rootKey);
        expect(dump).not.toContain(sha256Base64(rootKey));
      } finally {
        db.close();
      }
    } finally {
      data.cleanup();
    }
  });
});

describe("secrets", () => {
  test("no entry holds a key string, a root key, their stored hashes, or a recoverable key's ciphertext", () => {
    const sqlite = h.embedded.storage.sqlite;
    const dump = JSON.stringify(sqlite.query("SELECT * FROM audit_logs").all());
    expect(secrets.size).toBeGreaterThan(10);
    const stored = sqlite.query<{ v: string }, []>(
      "SELECT hash AS v FROM keys UNION ALL SELECT hash FROM root_keys UNION ALL SELECT encrypted FROM keys WHERE encrypted IS NOT NULL UNION ALL SELECT encrypted FROM data_keys",
    ).all().map((r) => r.v);
    const derived = [...stored, ...[...secrets].map(sha256Base64)];
    // key.create made a recoverable key, so there is a ciphertext to look for.
    expect(sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM keys WHERE encrypted IS NOT NULL").get()!.n).toBeGreaterThan(0);
    expect([...secrets].filter((s) => dump.includes(s))).toEqual([]);
    expect(derived.filter((x) => dump.includes(x))).toEqual([]);
  });
});
