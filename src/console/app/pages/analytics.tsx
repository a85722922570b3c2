/**
 * Analytics: a SQL box over analytics.getVerifications, the tables and columns a query may use,
 * the result as a table and, with a `time` column, as a chart. A syntax error's position (named
 * in the 400's detail) is selected in the box and pointed at under it.
 */
import type { JSX } from "preact";
import { useRef, useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { TextArea } from "../components/field.tsx";
import { TimeChart } from "../components/time-chart.tsx";
import { useSession } from "../context.ts";
import { ANALYTICS_TABLES, errorPosition, resultChart, type ErrorPosition } from "../sql-box.ts";
import { AnalyticsStatus } from "./overview.tsx";

const SAMPLE = "SELECT time, outcome, SUM(count) AS total\nFROM key_verifications_per_hour_v1\nWHERE time >= now() - INTERVAL 1 DAY\nGROUP BY time, outcome\nORDER BY time";

type Rows = Array<Record<string, unknown>>;

export function AnalyticsPage(): JSX.Element {
  const { client } = useSession();
  const [query, setQuery] = useState(SAMPLE);
  const [rows, setRows] = useState<Rows | undefined>();
  const [error, setError] = useState<unknown>();
  const [position, setPosition] = useState<ErrorPosition | undefined>();
  const box = useRef<HTMLTextAreaElement>(null);
  const run = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setPosition(undefined);
    try {
      setRows(await client.call("analytics.getVerifications", { query }));
    } catch (err) {
      setRows(undefined);
      setError(err);
      const at = err instanceof ApiError && err.status === 400 ? errorPosition(query, err.detail) : undefined;
      setPosition(at);
      if (at && box.current) {
        box.current.focus();
        box.current.setSelectionRange(at.offset, Math.max(at.offset + 1, wordEnd(query, at.offset)));
      }
    }
  };
  return (
    <section>
      <h1>Analytics</h1>
      <AnalyticsStatus />
      <form onSubmit={run} aria-label="Query">
        <TextArea label="SQL" value={query} onInput={setQuery} rows={6} inputRef={box} hint="One SELECT over the tables below; rows of this workspace only." />
        {position && <ErrorMark query={query} at={position} />}
        <div class="actions"><button type="submit" disabled={query.trim() === ""}>Run</button></div>
      </form>
      <ErrorBanner error={error} />
      {rows && <Result rows={rows} />}
      <Tables onPick={(table) => setQuery(`SELECT *\nFROM ${table}\nORDER BY time DESC\nLIMIT 100`)} />
    </section>
  );
}

/** The end of the word starting at `offset` (a token to select rather than one character). */
function wordEnd(query: string, offset: number): number {
  const m = /^[^\s,()]+/.exec(query.slice(offset));
  return offset + (m ? m[0].length : 0);
}

/** The query's line with a caret under the error's column, as a compiler prints it. */
function ErrorMark(props: { query: string; at: ErrorPosition }): JSX.Element {
  const line = props.query.split("\n")[props.at.line - 1] ?? "";
  return (
    <div class="sql-error" data-testid="sql-error-position">
      <p>Error at line {props.at.line}, column {props.at.column}:</p>
      <pre>{`${line}\n${" ".repeat(props.at.column - 1)}^`}</pre>
    </div>
  );
}

function Result(props: { rows: Rows }): JSX.Element {
  const { rows } = props;
  const chart = resultChart(rows);
  const columns = rows[0] ? Object.keys(rows[0]) : [];
  return (
    <div>
      <h2>Result <span class="muted">({rows.length} {rows.length === 1 ? "row" : "rows"})</span></h2>
      {chart && <TimeChart title="Result over time" timesMs={chart.timesMs} series={chart.series} />}
      <div class="table-scroll">
        <table>
          <caption>Result rows</caption>
          <thead><tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
          <tbody>
            {rows.map((r, i) => <tr key={i}>{columns.map((c) => <td key={c} data-label={c}>{cellText(r[c])}</td>)}</tr>)}
            {rows.length === 0 && <tr><td class="muted">No rows.</td></tr>}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "—";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function Tables(props: { onPick(table: string): void }): JSX.Element {
  return (
    <div>
      <h2>Tables</h2>
      <p class="muted">
        <code>time</code> is Unix ms; the rollups count verifications per bucket in <code>count</code>, the <code>ratelimits_*</code>
        tables rate-limit decisions per bucket and namespace (they need <code>ratelimit.*.read_analytics</code>).
      </p>
      <ul class="sql-tables">
        {ANALYTICS_TABLES.map((t) => (
          <li key={t.name}>
            <button type="button" class="secondary" onClick={() => props.onPick(t.name)} aria-label={`Query ${t.name}`}><code>{t.name}</code></button>
            <span class="muted"> {t.columns.join(", ")}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
