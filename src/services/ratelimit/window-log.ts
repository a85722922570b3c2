/**
 * The encoding of one chunk of the window log (`ratelimit_log.data`): up to CHUNK_WINDOWS windows
 * as compact JSON text, scopes listed once per chunk and referred to by position:
 *
 *   {"v":2,"scopes":[workspace, scopeKey, durationMs, …],"windows":[scopeIndex, identifier, windowStartMs, count, previousCount, …]}
 *
 * Flat arrays rather than an object per window keep both the text and the parse small
 * (~40 bytes per window for short identifiers). Format 1 had no workspace per scope; its scope keys
 * start with the workspace id and a `|`, so it is read from there.
 */
import type { WindowRow } from "./sliding-window.ts";

export const CHUNK_WINDOWS = 4096;
const FORMAT_VERSION = 2;
const WINDOW_FIELDS = 5;
/** Values per scope in `scopes`: workspace, key, duration (format 1: key, duration). */
const SCOPE_FIELDS = 3;
const V1_SCOPE_FIELDS = 2;

export interface EncodedChunk {
  data: string;
  windows: number;
  /** When the last of its windows stops weighing anything: max(window start + 2 × duration). */
  expiresMs: number;
}

/** When neither count of a window is weighed any more (the limiter's prune rule). */
export function expiresMs(row: Pick<WindowRow, "windowStartMs" | "durationMs">): number {
  return row.windowStartMs + 2 * row.durationMs;
}

/** Encodes `rows` (at most CHUNK_WINDOWS) as one chunk. */
export function encodeChunk(rows: readonly WindowRow[]): EncodedChunk {
  const scopes: (string | number)[] = [];
  // By scope key alone: a scope belongs to one workspace.
  const scopeIndex = new Map<string, Map<number, number>>();
  const windows: (string | number)[] = [];
  let latest = 0;
  for (const row of rows) {
    let byDuration = scopeIndex.get(row.scope);
    if (byDuration === undefined) {
      byDuration = new Map();
      scopeIndex.set(row.scope, byDuration);
    }
    let index = byDuration.get(row.durationMs);
    if (index === undefined) {
      index = scopes.length / SCOPE_FIELDS;
      byDuration.set(row.durationMs, index);
      scopes.push(row.workspace, row.scope, row.durationMs);
    }
    windows.push(index, row.identifier, row.windowStartMs, row.count, row.previousCount);
    latest = Math.max(latest, expiresMs(row));
  }
  return { data: JSON.stringify({ v: FORMAT_VERSION, scopes, windows }), windows: rows.length, expiresMs: latest };
}

/** Decodes a chunk of format 1 or 2; throws on a chunk this version does not understand. */
export function decodeChunk(data: string): WindowRow[] {
  const parsed = JSON.parse(data) as { v?: unknown; scopes?: unknown; windows?: unknown };
  const scopeFields = parsed.v === FORMAT_VERSION ? SCOPE_FIELDS : parsed.v === 1 ? V1_SCOPE_FIELDS : undefined;
  if (scopeFields === undefined || !Array.isArray(parsed.scopes) || !Array.isArray(parsed.windows)) {
    throw new Error(`unreadable rate-limit log chunk (format ${String(parsed.v)})`);
  }
  const scopes = parsed.scopes as (string | number)[];
  const w = parsed.windows as (string | number)[];
  const rows: WindowRow[] = [];
  for (let i = 0; i + WINDOW_FIELDS <= w.length; i += WINDOW_FIELDS) {
    const s = (w[i] as number) * scopeFields;
    const scope = scopes[s + scopeFields - 2] as string;
    rows.push({
      workspace: scopeFields === V1_SCOPE_FIELDS ? workspaceOfScope(scope) : scopes[s] as string,
      scope, durationMs: scopes[s + scopeFields - 1] as number, identifier: w[i + 1] as string,
      windowStartMs: w[i + 2] as number, count: w[i + 3] as number, previousCount: w[i + 4] as number,
    });
  }
  return rows;
}

/** The workspace of a scope key written before scopes carried their workspace: the part before the first `|`. */
function workspaceOfScope(scope: string): string {
  const bar = scope.indexOf("|");
  return bar === -1 ? scope : scope.slice(0, bar);
}

/**
 * Splits a counter name of the first storage format (`${workspaceId}|${namespaceId}|${identifier}`,
 * or `${workspaceId}|key-limit|${name}|${ownerId}`) into scope and identifier: the scope is the part
 * before the second `|`, which ids never contain. Undefined for a name of neither shape.
 */
export function splitLegacyCounter(counter: string): { workspace: string; scope: string; identifier: string } | undefined {
  const first = counter.indexOf("|");
  const second = first === -1 ? -1 : counter.indexOf("|", first + 1);
  if (second === -1 || second === counter.length - 1) return undefined;
  return { workspace: counter.slice(0, first), scope: counter.slice(0, second), identifier: counter.slice(second + 1) };
}
