/**
 * A table over a paged list: a search box, the rows, and Previous/Next through the API's cursors
 * (kept as a stack, since the API pages forward only). The page decides what the search means:
 * it gets the term with each load.
 */
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Page } from "../api/client.ts";
import { ErrorBanner } from "./error-banner.tsx";
import { Field } from "./field.tsx";

const SEARCH_DELAY_MS = 300;

export interface Column<T> {
  header: string;
  cell(row: T): ComponentChildren;
}

export interface DataTableProps<T> {
  caption: string;
  columns: ReadonlyArray<Column<T>>;
  load(cursor: string | undefined, search: string): Promise<Page<T>>;
  rowKey(row: T): string;
  searchLabel?: string;
  /** Changing it reloads from the first page (after a create or delete). */
  version?: number;
  empty?: string;
}

export function DataTable<T>(props: DataTableProps<T>): JSX.Element {
  const [typed, setTyped] = useState("");
  const [search, setSearch] = useState("");
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [page, setPage] = useState<Page<T> | undefined>();
  const [error, setError] = useState<unknown>();
  const cursor = cursors[cursors.length - 1];
  // A search runs once typing pauses, not on every keystroke (a key search reads pages of keys).
  useEffect(() => {
    const timer = setTimeout(() => setSearch(typed), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  useEffect(() => setCursors([undefined]), [search, props.version]);
  useEffect(() => {
    let live = true;
    setError(undefined);
    props.load(cursor, search.trim()).then((p) => live && setPage(p), (e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [cursors, search, props.version]);
  return (
    <div class="data-table">
      {props.searchLabel && <Field label={props.searchLabel} type="search" value={typed} onInput={setTyped} />}
      <ErrorBanner error={error} />
      <div class="table-scroll">
        <table>
          <caption>{props.caption}</caption>
          <thead><tr>{props.columns.map((c) => <th key={c.header} scope="col">{c.header}</th>)}</tr></thead>
          <tbody>
            {page?.items.map((row) => <tr key={props.rowKey(row)}>{props.columns.map((c) => <td key={c.header} data-label={c.header}>{c.cell(row)}</td>)}</tr>)}
            {page && page.items.length === 0 && <tr><td colSpan={props.columns.length} class="muted">{props.empty ?? "Nothing here yet."}</td></tr>}
            {!page && !error && <tr><td colSpan={props.columns.length} class="muted">Loading…</td></tr>}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>Previous</button>
        <button type="button" class="secondary" disabled={!page?.cursor} onClick={() => setCursors([...cursors, page?.cursor])}>Next</button>
      </div>
    </div>
  );
}
