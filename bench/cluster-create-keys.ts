/**
 * keys.createKey/s at concurrency 16 on one node: the embedded mode and one cluster node (of three,
 * on one PostgreSQL and one Redis), in alternating rounds of the same client, then every key the
 * cluster node created verified on each of the three nodes. Two bodies: a bare key, and one with
 * two permissions and an identity shared with other keys (so concurrent creates of one workspace
 * meet on the same permission and identity rows).
 * The client is Bun's fetch in this process, not wrk: it keeps the keys it is answered, to verify them.
 */
import { cpuMs, median } from "./lib.ts";
import type { Child } from "./lib.ts";

const CONCURRENCY = 16;

interface CreateRound {
  keysPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  cpuUsPerKey: number;
  keys: string[];
}

/** `CONCURRENCY` clients creating keys through `node` for `seconds`; CPU of `pids` per key created. */
async function createRound(node: Child, rootKey: string, body: (i: number) => unknown, seconds: number, pids: number[]): Promise<CreateRound> {
  const before = pids.map((pid) => cpuMs(pid));
  const keys: string[] = [];
  const latencies: number[] = [];
  let failed = 0;
  let sent = 0;
  const startedMs = performance.now();
  const endMs = startedMs + seconds * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < endMs) {
      const at = performance.now();
      const res = await fetch(`${node.url}/v2/keys.createKey`, {
        method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body(sent++)),
      });
      const answer = await res.json() as { data?: { key: string } };
      latencies.push(performance.now() - at);
      if (res.status === 200 && answer.data) keys.push(answer.data.key);
      else failed++;
    }
  }));
  const elapsedS = (performance.now() - startedMs) / 1000;
  const cpu = pids.reduce((sum, pid, i) => sum + (cpuMs(pid) - before[i]!), 0);
  latencies.sort((a, b) => a - b);
  return {
    keysPerSec: keys.length / elapsedS,
    p50Ms: latencies[Math.floor(latencies.length / 2)] ?? 0,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    failed,
    cpuUsPerKey: (cpu * 1000) / Math.max(1, keys.length),
    keys,
  };
}

/** How many of `keys` verify as valid on `node`, 16 at a time. */
async function verifiedOn(node: Child, rootKey: string, keys: readonly string[]): Promise<number> {
  let valid = 0;
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const res = await fetch(`${node.url}/v2/keys.verifyKey`, {
        method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify({ key }),
      });
      const answer = await res.json() as { data?: { valid: boolean } };
      if (answer.data?.valid === true) valid++;
    }
  }));
  return valid;
}

export interface CreateKeysSetup {
  embedded: Child;
  /** Three cluster nodes; the first is loaded, all three verify. */
  cluster: Child[];
  /** PostgreSQL's and Redis's processes, counted with the cluster node's CPU. */
  backing: () => number[];
  rootKey: string;
  apiId: string;
  seconds: number;
  rounds: number;
}

/** The phase's table, in BENCHMARKS.md's form. */
export async function createKeysPhase(s: CreateKeysSetup): Promise<string> {
  const bodies: Array<[string, (i: number) => unknown]> = [
    ["bare key", () => ({ apiId: s.apiId, prefix: "cb" })],
    ["2 permissions + shared identity", (i) => ({ apiId: s.apiId, prefix: "cb", externalId: `owner_${i % 50}`, permissions: ["documents.read", `documents.${i % 7}`] })],
  ];
  const rows: string[] = [];
  for (const [name, body] of bodies) {
    const embedded: CreateRound[] = [];
    const cluster: CreateRound[] = [];
    for (let round = 0; round < s.rounds; round++) {
      embedded.push(await createRound(s.embedded, s.rootKey, body, s.seconds, [s.embedded.pid]));
      cluster.push(await createRound(s.cluster[0]!, s.rootKey, body, s.seconds, [s.cluster[0]!.pid, ...s.backing()]));
    }
    const created = cluster.flatMap((r) => r.keys);
    const verified = await Promise.all(s.cluster.map((node) => verifiedOn(node, s.rootKey, created)));
    const m = (xs: CreateRound[], pick: (r: CreateRound) => number) => median(xs.map(pick));
    for (const [mode, runs] of [["embedded", embedded], ["cluster, node 1 of 3", cluster]] as const) {
      rows.push(`| ${name} | ${mode} | ${m(runs, (r) => r.keysPerSec).toFixed(0)} | ${m(runs, (r) => r.p50Ms).toFixed(1)} | ${m(runs, (r) => r.p99Ms).toFixed(1)} | ${runs.reduce((n, r) => n + r.failed, 0)} | ${m(runs, (r) => r.cpuUsPerKey).toFixed(0)} | ${mode === "embedded" ? "–" : verified.map((v) => `${v}/${created.length}`).join(", ")} |`);
    }
  }
  return [
    `### keys.createKey/s at concurrency ${CONCURRENCY} on one node (${s.rounds} × ${s.seconds} s per mode, alternating; Bun fetch client)\n`,
    "| body | mode | keys/s | p50 ms | p99 ms | failed | CPU µs/key | valid on nodes 1, 2, 3 |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "\nCPU counts the loaded node and, in the cluster, PostgreSQL's and Redis's processes.",
  ].join("\n");
}
