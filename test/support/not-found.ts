/**
 * "Not found" is one answer: helpers that ask for another workspace's record and for a
 * never-existing one of the same shape, and require answers that cannot be told apart.
 */
import { expect } from "bun:test";
import { randomBase58 } from "../../src/lib/ids.ts";
import type { ApiResponse, Harness } from "./harness.ts";

/** The body fields that name the record a route addresses; a body has exactly one of them. */
const ADDRESSING_FIELDS = ["apiId", "keyId", "key", "identity", "permission", "role", "roleId", "namespace", "logId"];

/** The reference a route-table body names its record by. */
export function addressedRef(body: unknown): string {
  const fields = ADDRESSING_FIELDS.filter((f) => typeof (body as Record<string, unknown>)[f] === "string");
  expect(fields).toHaveLength(1);
  return (body as Record<string, string>)[fields[0]!]!;
}

/** A reference of the same shape that names nothing: the part up to the last `_` kept, the rest random base58 of the same length. */
export function lookalike(ref: string): string {
  const cut = ref.lastIndexOf("_") + 1;
  return ref.slice(0, cut) + randomBase58(ref.length - cut);
}

/** `value` with every occurrence of the string `from` in it replaced by `to`. */
export function swap<T>(value: T, from: string, to: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll(from, to)) as T;
}

/** All a caller sees of an answer but its request id: status, content type and body, with `ref` blanked out. */
export function observed(res: ApiResponse, ref: string): unknown {
  const body = typeof res.body === "object" && res.body !== null ? { ...res.body, meta: { ...res.body.meta, requestId: "req" } } : res.body;
  return { status: res.status, contentType: res.headers.get("content-type"), body: swap(body, ref, "<ref>") };
}

export interface Ask {
  path: string;
  body: unknown;
  /** The root key that asks. */
  key: string;
  /** The reference in `body` that names the record. */
  ref: string;
  /** What to name instead of `ref`; default a lookalike that names nothing. */
  instead?: string;
}

/**
 * Asks for the record `ref` names and for `instead` (default a never-existing lookalike), and
 * requires the same answer (never a 5xx), which is returned.
 */
export async function expectOneAnswer(h: Harness, ask: Ask): Promise<ApiResponse> {
  const other = ask.instead ?? lookalike(ask.ref);
  const named = await h.post(ask.path, ask.body, { key: ask.key });
  const unknown = await h.post(ask.path, swap(ask.body, ask.ref, other), { key: ask.key });
  expect(named.status).toBeLessThan(500);
  expect(observed(unknown, other)).toEqual(observed(named, ask.ref));
  return named;
}
