/** The overview: who is signed in, what analytics can show, and how to turn it on where it is off. */
import type { JSX } from "preact";
import { useSession } from "../context.ts";

export function Overview(): JSX.Element {
  const { whoami } = useSession();
  return (
    <section>
      <h1>Overview</h1>
      <p>Workspace <strong>{whoami.workspace.name}</strong> (<code>{whoami.workspace.id}</code>), root key <strong>{whoami.name || whoami.rootKeyId}</strong>.</p>
      <AnalyticsStatus />
    </section>
  );
}

/** Says how to turn analytics on where it is off; nothing when it is on. */
export function AnalyticsStatus(): JSX.Element | null {
  const { analytics, workspace } = useSession().whoami;
  if (analytics.recording && analytics.querying) return null;
  return (
    <div class="notice" role="status">
      <h2>Analytics is off</h2>
      {!analytics.recording && <p>This tollgate does not record verifications. Start it with <code>TOLLGATE_ANALYTICS=on</code> (the default).</p>}
      {!analytics.querying && <p>This workspace has not opted in to analytics queries. Run <code>tollgate workspace update {workspace.name} --analytics on</code>.</p>}
    </div>
  );
}
