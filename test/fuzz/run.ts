/**
 * `bun run test:fuzz`: the long form of the hostile-input tests. Every hostile body of every route
 * (plus FUZZ_EXTRA random samples again with other values); the least-privilege campaign
 * (privilege.ts) with FUZZ_PRIVILEGE hostile bodies per route and caller (default 60); FUZZ_SQL
 * analytics queries and FUZZ_PERMISSIONS permission queries (defaults 3,000 each); the transport
 * campaign (transport.ts) with FUZZ_TRANSPORT request shapes per route (default 20: chunked,
 * declared at and past the limit, cut short, trickled, keyless and trickled, bursts, malformed
 * framing, odd request lines and Hosts) against a service with short body bounds.
 * FUZZ_ONLY=transport (or another campaign's name) runs that campaign alone. FUZZ_SEED (default random) is printed. Exits
 * 1 on any problem.
 */
import { startHarness } from "../support/harness.ts";
import { seedFrom } from "../support/prng.ts";
import { runRouteCampaign, type FuzzSummary } from "./campaign.ts";
import { runQueryCampaign } from "./queries.ts";
import { runPrivilegeCampaign } from "./privilege.ts";
import { runTransportCampaign, transportHarnessEnv } from "./transport.ts";

const seed = seedFrom("FUZZ_SEED", process.env);
const sql = Number(process.env.FUZZ_SQL ?? "3000");
const permissions = Number(process.env.FUZZ_PERMISSIONS ?? "3000");
console.log(`fuzz: seed ${seed} (FUZZ_SEED=${seed} reproduces it)`);

const only = process.env.FUZZ_ONLY;
type Running = Awaited<ReturnType<typeof startHarness>>;

async function campaign(name: string, run: (h: Running, logLines: string[]) => Promise<FuzzSummary>, env: Record<string, string> = { TOLLGATE_RATELIMIT_FLUSH_MS: "60000" }): Promise<FuzzSummary> {
  if (only !== undefined && only !== name) return { requests: 0, byStatus: {}, problems: [] };
  const startedMs = performance.now();
  const logLines: string[] = [];
  // Only the transport campaign reads the log (an odd request's one access line).
  const h = await startHarness(name === "transport" ? { env, logLines } : { env });
  try {
    const s = await run(h, logLines);
    const statuses = Object.entries(s.byStatus).map(([status, n]) => `${status}: ${n}`).join(", ");
    console.log(`fuzz ${name}: ${s.requests} requests in ${((performance.now() - startedMs) / 1000).toFixed(1)} s (${statuses}), ${s.problems.length} problems`);
    for (const p of s.problems) console.log(`  ${p}`);
    return s;
  } finally {
    await h.stop();
    logLines.length = 0;
  }
}

const routes = await campaign("routes", (h) => runRouteCampaign(h, { seed, perRoute: Infinity }));
const privilege = await campaign("least privilege", (h) => runPrivilegeCampaign(h, { seed, perRoute: Number(process.env.FUZZ_PRIVILEGE ?? "60") }));
const queries = await campaign("queries", (h) => runQueryCampaign(h, { seed, sql, permissions }));
const transport = await campaign("transport", (h, logLines) => runTransportCampaign(h, { seed, perRoute: Number(process.env.FUZZ_TRANSPORT ?? "20"), logLines }), transportHarnessEnv());
const campaigns = [routes, privilege, queries, transport];
const pollution = Object.keys(Object.prototype).length > 0 ? 1 : 0;
const problems = campaigns.reduce((n, c) => n + c.problems.length, pollution);
console.log(`fuzz: ${campaigns.reduce((n, c) => n + c.requests, 0)} requests, ${problems} problems${pollution ? " (Object.prototype polluted)" : ""}, seed ${seed}`);
if (problems > 0) process.exit(1);
