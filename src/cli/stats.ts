/** `tollgate stats`: a workspace's verifications since a time, by outcome and by API, from the analytics totals. */
import type { Config } from "../config.ts";
import type { Services } from "../services/index.ts";
import type { Actor } from "../services/auth/index.ts";
import { instantFlag, parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import { JSON_FLAG } from "./output.ts";
import { chosenApi, principalIn, type ServicesCommand } from "./scope.ts";

export const STATS_HELP = `tollgate stats [--workspace <id|name>] [--since <when>] [--api <id|name>] [--json]
                                      verifications since --since (30d, 12h, an ISO date or Unix ms;
                                      default 7d), one count a line: 'total' <n>, then 'outcome' <outcome> <n>,
                                      then 'api' <api id> <name> <outcome> <n>, the busiest API first. Events a
                                      running serve has not written yet (TOLLGATE_ANALYTICS_FLUSH_MS) are not counted.
                                      Then the workspace's use of each quota: 'quota' <name> <used> <limit> <variable>
                                      (storage in bytes); --json adds them as 'quotas'.`;

const DEFAULT_SINCE = "7d";

export function statsCommand(args: string[], config: Config, actor: Actor, io: CliIo): ServicesCommand {
  const { values, positionals } = parse(args, { ...JSON_FLAG, workspace: { type: "string" }, since: { type: "string" }, api: { type: "string" } });
  if (positionals.length > 0) throw new UsageError("stats takes no arguments");
  const nowMs = Date.now();
  const sinceMs = instantFlag("since", (values.since as string | undefined) ?? DEFAULT_SINCE, nowMs, -1);
  if (sinceMs > nowMs) throw new UsageError(`--since ${values.since} is in the future`);
  return async (services) => {
    if (!config.recordVerifications) {
      io.stderr("error: verifications are not recorded (TOLLGATE_ANALYTICS=off), so there are no stats");
      return EXIT.failure;
    }
    const totals = services.verificationTotals;
    if (totals === undefined) {
      io.stderr("error: stats read the analytics totals; these services have none");
      return EXIT.failure;
    }
    const principal = await principalIn(services, values.workspace as string | undefined, actor);
    const api = typeof values.api === "string" ? await chosenApi(services, principal, values.api) : undefined;
    const summary = await totals.since(principal, { sinceMs, ...(api ? { apiId: api.id } : {}) });
    const quotas = await services.quotas.usage(principal.workspaceId);
    if (values.json === true) {
      io.stdout(JSON.stringify({ ...summary, quotas }));
      return EXIT.ok;
    }
    io.stdout(`total\t${summary.total}`);
    for (const [outcome, count] of Object.entries(summary.outcomes)) io.stdout(`outcome\t${outcome}\t${count}`);
    for (const a of summary.apis) {
      for (const [outcome, count] of Object.entries(a.outcomes)) io.stdout(`api\t${a.apiId ?? "-"}\t${a.name ?? "-"}\t${outcome}\t${count}`);
    }
    for (const q of quotas) io.stdout(`quota\t${q.quota}\t${q.used}\t${q.limit}\t${q.variable}`);
    return EXIT.ok;
  };
}
