/**
 * The audit log: filters (event, actor, resource, time range), newest first with paging, and an
 * entry's details (audit.getLog). Times are entered and shown in UTC, the service's one zone.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { AuditEntry, Routes } from "../api/routes.ts";
import { DataTable } from "../components/data-table.tsx";
import { Dialog } from "../components/dialog.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { formatTime } from "../format.ts";
import { useAsync } from "../use-async.ts";

interface Filters {
  event: string;
  actorId: string;
  resourceId: string;
  since: string;
  until: string;
}

const NO_FILTERS: Filters = { event: "", actorId: "", resourceId: "", since: "", until: "" };

/** A datetime-local value read as UTC; undefined when empty or not a time. */
function utcMs(value: string): number | undefined {
  if (value === "") return undefined;
  const ms = Date.parse(`${value}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

function filterBody(f: Filters): Routes["audit.listLogs"]["body"] {
  const since = utcMs(f.since);
  const until = utcMs(f.until);
  return {
    ...(f.event.trim() ? { event: f.event.trim() } : {}),
    ...(f.actorId.trim() ? { actorId: f.actorId.trim() } : {}),
    ...(f.resourceId.trim() ? { resourceId: f.resourceId.trim() } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}

export function AuditPage(): JSX.Element {
  const { client } = useSession();
  const [typed, setTyped] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [version, setVersion] = useState(0);
  const [open, setOpen] = useState<string | undefined>();
  const set = (name: keyof Filters) => (value: string) => setTyped({ ...typed, [name]: value });
  const apply = (e: Event) => {
    e.preventDefault();
    setApplied(typed);
    setVersion((v) => v + 1);
  };
  const columns = [
    { header: "Time", cell: (a: AuditEntry) => formatTime(a.time) },
    { header: "Event", cell: (a: AuditEntry) => <code>{a.event}</code> },
    { header: "Actor", cell: (a: AuditEntry) => <>{a.actor.name ?? a.actor.id} <span class="muted">({a.actor.type})</span></> },
    { header: "Description", cell: (a: AuditEntry) => a.description },
    { header: "Details", cell: (a: AuditEntry) => <button type="button" class="secondary" onClick={() => setOpen(a.logId)} aria-label={`Details of ${a.logId}`}>Details</button> },
  ];
  return (
    <section>
      <h1>Audit log</h1>
      <form onSubmit={apply} aria-label="Filters">
        <div class="grid-2">
          <Field label="Event" value={typed.event} onInput={set("event")} placeholder="key.create" />
          <Field label="Actor id" value={typed.actorId} onInput={set("actorId")} placeholder="rk_… or cli" />
          <Field label="Resource id" value={typed.resourceId} onInput={set("resourceId")} placeholder="key_…, api_…" />
          <Field label="From (UTC)" type="datetime-local" value={typed.since} onInput={set("since")} />
          <Field label="To (UTC)" type="datetime-local" value={typed.until} onInput={set("until")} />
        </div>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => { setTyped(NO_FILTERS); setApplied(NO_FILTERS); setVersion((v) => v + 1); }}>Clear</button>
          <button type="submit">Filter</button>
        </div>
      </form>
      <DataTable caption="Audit log entries, newest first" columns={columns} rowKey={(a) => a.logId} version={version} empty="No entries match."
        load={(cursor) => client.page("audit.listLogs", { ...filterBody(applied), ...(cursor ? { cursor } : {}) })} />
      {open && <EntryDetails logId={open} onClose={() => setOpen(undefined)} />}
    </section>
  );
}

function EntryDetails(props: { logId: string; onClose(): void }): JSX.Element {
  const { client } = useSession();
  const entry = useAsync(() => client.call("audit.getLog", { logId: props.logId }), [props.logId]);
  const e = entry.data;
  return (
    <Dialog title="Audit log entry" onClose={props.onClose}>
      <ErrorBanner error={entry.error} />
      {e && (
        <dl class="facts">
          <dt>Id</dt><dd><code>{e.logId}</code></dd>
          <dt>Time</dt><dd>{formatTime(e.time)} <span class="muted">({e.time})</span></dd>
          <dt>Event</dt><dd><code>{e.event}</code></dd>
          <dt>Actor</dt><dd>{e.actor.type} <code>{e.actor.id}</code>{e.actor.name ? ` (${e.actor.name})` : ""}</dd>
          <dt>Description</dt><dd>{e.description}</dd>
          <dt>Resources</dt>
          <dd><ul>{e.resources.map((r) => <li key={`${r.type}:${r.id}`}>{r.type} <code>{r.id}</code>{r.name ? ` (${r.name})` : ""}</li>)}</ul></dd>
          <dt>Remote address</dt><dd>{e.remoteIp ?? "—"}</dd>
          <dt>User agent</dt><dd>{e.userAgent ?? "—"}</dd>
        </dl>
      )}
      <div class="actions"><button type="button" class="secondary" autoFocus onClick={props.onClose}>Close</button></div>
    </Dialog>
  );
}
