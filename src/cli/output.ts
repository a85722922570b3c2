/**
 * How the CLI shows what it lists or reads: tab-separated lines in a fixed column order (no header,
 * for cut and awk), or with `--json` one JSON document (an array for a list, an object for one thing).
 */
import type { CliIo } from "./io.ts";

/** The `--json` flag, for parse(): every command that lists or shows takes it. */
export const JSON_FLAG = { json: { type: "boolean" } } as const;

/** A cell of a line: absent values as `-`, tabs and newlines inside a value as spaces. */
function cell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined || value === "") return "-";
  return String(value).replace(/[\t\r\n]/g, " ");
}

/** Prints `items` as JSON (an array) or as one line each, its cells from `columns`. */
export function printList<T>(io: CliIo, json: boolean, items: readonly T[], columns: (item: T) => Array<string | number | boolean | null | undefined>): void {
  if (json) {
    io.stdout(JSON.stringify(items));
    return;
  }
  for (const item of items) io.stdout(columns(item).map(cell).join("\t"));
}

/** Prints `item` as a JSON object or as one line of cells. */
export function printOne<T>(io: CliIo, json: boolean, item: T, columns: (item: T) => Array<string | number | boolean | null | undefined>): void {
  if (json) io.stdout(JSON.stringify(item));
  else io.stdout(columns(item).map(cell).join("\t"));
}
