/**
 * The overview's quotas: the workspace's use of each quota against its limit, from rootKeys.whoami
 * (asked again when the page opens, so the numbers are not those of the sign-in). Creating past a
 * limit answers 429; the variable says what the operator raises.
 */
import type { JSX } from "preact";
import type { QuotaUse } from "../api/routes.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { useSession } from "../context.ts";
import { useAsync } from "../use-async.ts";

const MIB = 1024 * 1024;

const LABELS: Record<QuotaUse["quota"], string> = {
  keys: "Keys", identities: "Identities", permissions: "Permissions", roles: "Roles", namespaces: "Rate-limit namespaces", storage: "Storage",
};

const amount = (q: QuotaUse, n: number) => (q.quota === "storage" ? `${(n / MIB).toFixed(n % MIB === 0 ? 0 : 1)} MiB` : n.toLocaleString("en"));

const used = (q: QuotaUse) => `${amount(q, q.used)} (${Math.floor((q.used / q.limit) * 100)}%)`;

export function Quotas(): JSX.Element {
  const { client } = useSession();
  const quotas = useAsync(async () => (await client.call("rootKeys.whoami", {})).quotas, []);
  return (
    <>
      <h2>Quotas</h2>
      <ErrorBanner error={quotas.error} />
      <table>
        <thead><tr><th scope="col">Quota</th><th scope="col">Used</th><th scope="col">Limit</th><th scope="col">Set by</th></tr></thead>
        <tbody>
          {quotas.data?.map((q) => (
            <tr key={q.quota}>
              <td data-label="Quota">{LABELS[q.quota]}</td>
              <td data-label="Used">{q.used >= q.limit ? <strong>{used(q)} — full</strong> : used(q)}</td>
              <td data-label="Limit">{amount(q, q.limit)}</td>
              <td data-label="Set by"><code>{q.variable}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
