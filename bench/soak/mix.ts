/**
 * The soak's mixed workload as weighted operations, each with the request bodies it picks from at
 * random: mostly keys.verifyKey (plain, with a permission query, with a credit spend), then
 * ratelimits.limit over 10,000 identifiers, and now and then keys.createKey, keys.updateKey,
 * keys.updateCredits and an analytics.getVerifications query. The same mix drives wrk (capacity)
 * and the constant-rate client (the soak).
 */
import { SOAK_NAMESPACE, type SoakData } from "./seed.ts";

export interface Operation {
  name: string;
  path: string;
  /** Out of the sum of all weights. */
  weight: number;
  bodies: string[];
}

const IDENTIFIERS = 10_000;

const ANALYTICS_QUERIES = [
  "SELECT time, SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM key_verifications_per_day_v1 WHERE time > now() - INTERVAL 7 DAY GROUP BY time ORDER BY time",
  "SELECT external_id, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE time > now() - INTERVAL 1 DAY GROUP BY external_id ORDER BY total DESC LIMIT 10",
  "SELECT outcome, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE time > now() - INTERVAL 30 DAY GROUP BY outcome",
];

export function buildMix(data: SoakData): Operation[] {
  const all = data.keys;
  const metered = all.filter((k) => k.metered);
  const json = (v: unknown) => JSON.stringify(v);
  return [
    { name: "verifyKey", path: "/v2/keys.verifyKey", weight: 4000, bodies: all.map((k) => json({ key: k.key })) },
    { name: "verifyKey + permission query", path: "/v2/keys.verifyKey", weight: 2000,
      bodies: all.map((k) => json({ key: k.key, permissions: "documents.read OR (documents.write AND documents.admin)" })) },
    { name: "verifyKey + credit spend", path: "/v2/keys.verifyKey", weight: 2500, bodies: metered.map((k) => json({ key: k.key, credits: { cost: 1 } })) },
    { name: "ratelimits.limit", path: "/v2/ratelimits.limit", weight: 1468,
      bodies: Array.from({ length: IDENTIFIERS }, (_, i) => json({ namespace: SOAK_NAMESPACE, identifier: `user_${i}`, limit: 1000, duration: 60_000 })) },
    { name: "keys.createKey", path: "/v2/keys.createKey", weight: 10,
      bodies: Array.from({ length: 50 }, (_, i) => json({ apiId: data.apiId, prefix: "soaknew", externalId: `owner_${i}`, permissions: ["documents.read"] })) },
    { name: "keys.updateKey", path: "/v2/keys.updateKey", weight: 10,
      bodies: all.slice(0, 1000).map((k, i) => json({ keyId: k.keyId, name: `renamed_${i}`, meta: { plan: i % 2 ? "pro" : "free" } })) },
    { name: "keys.updateCredits", path: "/v2/keys.updateCredits", weight: 10,
      bodies: metered.slice(0, 1000).map((k) => json({ keyId: k.keyId, operation: "increment", value: 5 })) },
    { name: "analytics.getVerifications", path: "/v2/analytics.getVerifications", weight: 2, bodies: ANALYTICS_QUERIES.map((query) => json({ query })) },
  ];
}

/** The operation for a uniform `r` in [0, 1). */
export function pick<T extends { weight: number }>(mix: readonly T[], r: number): T {
  const total = mix.reduce((sum, op) => sum + op.weight, 0);
  let point = r * total;
  for (const op of mix) {
    point -= op.weight;
    if (point < 0) return op;
  }
  return mix[mix.length - 1]!;
}

/** A wrk script that sends the same mix: an operation by weight, then one of its bodies at random. */
export function mixLua(mix: Operation[], rootKey: string): string {
  const ops = mix.map((op) => `{ path = "${op.path}", weight = ${op.weight}, bodies = {\n${op.bodies.map((b) => `[==[${b}]==]`).join(",\n")}\n} }`);
  return `local ops = {\n${ops.join(",\n")}\n}
local total = 0
for _, op in ipairs(ops) do total = total + op.weight end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${rootKey}"
math.randomseed(11)
request = function()
  local point = math.random() * total
  for _, op in ipairs(ops) do
    point = point - op.weight
    if point < 0 then return wrk.format(nil, op.path, nil, op.bodies[math.random(#op.bodies)]) end
  end
  local op = ops[#ops]
  return wrk.format(nil, op.path, nil, op.bodies[1])
end
`;
}
