/**
 * How the CLI shows what it lists or reads: a header row naming the columns, then tab-separated
 * lines in a fixed column order (`tail -n +2` and then cut or awk), or with `--json` one JSON
 * document (an array for a list, an object for one thing), which is what scripts should read.
 */
import type { CliIo } from "./io.ts";

/** The `--json` flag, for parse(): every command that lists or shows takes it. */
export const JSON_FLAG = { json: { type: "boolean" } } as const;

type Cell = string | number | boolean | null | undefined;

/** A table's columns in order: each a header and how an item fills it. */
export type Columns<T> = ReadonlyArray<readonly [header: string, value: (item: T) => Cell]>;

/** A cell of a line: absent values as `-`, tabs and newlines inside a value as spaces. */
function cell(value: Cell): string {
  if (value === null || value === undefined || value === "") return "-";
  return String(value).replace(/[\t\r\n]/g, " ");
}

function printRows<T>(io: CliIo, items: readonly T[], columns: Columns<T>): void {
  io.stdout(columns.map(([header]) => header).join("\t"));
  for (const item of items) io.stdout(columns.map(([, value]) => cell(value(item))).join("\t"));
}

/** Prints `items` as JSON (an array) or as a header row and one line each. */
export function printList<T>(io: CliIo, json: boolean, items: readonly T[], columns: Columns<T>): void {
  if (json) io.stdout(JSON.stringify(items));
  else printRows(io, items, columns);
}

/** Prints `item` as a JSON object, or the one value a command answers (a balance, say) alone on its line, for `$(…)`. */
export function printValue<T>(io: CliIo, json: boolean, item: T, value: (item: T) => Cell): void {
  io.stdout(json ? JSON.stringify(item) : cell(value(item)));
}

/** Prints `item` as a JSON object or as a header row and one line. */
export function printOne<T>(io: CliIo, json: boolean, item: T, columns: Columns<T>): void {
  if (json) io.stdout(JSON.stringify(item));
  else printRows(io, [item], columns);
}
