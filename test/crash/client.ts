/**
 * How the crash suite talks to the service under test: the target (its URL, root keys and API),
 * the two ways to POST (during the load, where no answer is a possible outcome; and in the checks,
 * where anything but 200 is a failure), and the shape of one operation of the load.
 */
import type { Rng } from "../support/prng.ts";
import type { CliResult } from "../support/cli.ts";
import type { Ledger, LimitCall, RoundStats, TrackedRootKey } from "./ledger.ts";

export interface Target {
  url: string;
  apiId: string;
  /** The bootstrap root key: every permission. */
  rootKey: string;
  /** Only `api.*.verify_key`: every verification goes through it. */
  verifierKey: string;
  /** Only `api.*.update_key`, `api.*.delete_key` and `api.*.read_key`: updates, credit changes and deletions. */
  managerKey: string;
}

export interface RoundLoad {
  round: number;
  next: Rng;
  ledger: Ledger;
  stats: RoundStats;
  /** The round's rate-limit identifier's calls. */
  limitCalls: LimitCall[];
  /** Answers to wait for before the kill. */
  killAfter: number;
  /** The round's root key, revoked with the CLI once `revokeAfter` answers have arrived. */
  doomed: TrackedRootKey;
  revokeAfter: number;
  /** The round's analytics queries, one after another: a workspace runs one at a time and queues two, 429 beyond. */
  analyticsLane: Promise<unknown>;
  /** Runs a `tollgate` CLI command on the round's data dir. */
  cli(args: string[]): Promise<CliResult>;
}

/** One kind of request of the load; resolves false when its answer never arrived. */
export type Op = (t: Target, load: RoundLoad, n: number) => Promise<boolean>;

/** Thrown for an answer that is wrong in itself (a 5xx, an unexpected code): the round fails at once. */
export class WrongAnswer extends Error {}

async function send(url: string, path: string, body: unknown, key: string): Promise<Response> {
  return fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

/** During the load: `data`, or undefined when no answer arrived (connection refused or reset by the kill). */
export async function post(t: Target, path: string, body: unknown, key = t.rootKey): Promise<any | undefined> {
  let res: Response;
  let text: string;
  try {
    res = await send(t.url, path, body, key);
    text = await res.text();
  } catch {
    return undefined;
  }
  if (res.status !== 200) throw new WrongAnswer(`${path} ${JSON.stringify(body)} answered ${res.status}: ${text}`);
  return JSON.parse(text).data;
}

/** The status a request with `rootKey` gets, or undefined when no answer arrived. */
export async function rootKeyStatus(t: Target, rootKey: string): Promise<number | undefined> {
  try {
    const res = await fetch(`${t.url}/v2/apis.getApi`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
      body: JSON.stringify({ apiId: t.apiId }),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

/** In the checks: the status and parsed body of an answer that must arrive. */
export async function ask(t: Target, path: string, body: unknown, key = t.rootKey): Promise<{ status: number; body: any }> {
  const res = await send(t.url, path, body, key);
  return { status: res.status, body: await res.json() };
}

/** In the checks: the whole body of a 200 answer; anything else throws. */
export async function askOk(t: Target, path: string, body: unknown, key = t.rootKey): Promise<any> {
  const res = await ask(t, path, body, key);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every item of a paginated list route (`data: [...]`, `pagination: {cursor?, hasMore}`). */
export async function listAll(t: Target, path: string, body: Record<string, unknown>): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await askOk(t, path, { ...body, limit: 100, ...(cursor ? { cursor } : {}) });
    items.push(...page.data);
    cursor = page.pagination?.cursor;
  } while (cursor !== undefined);
  return items;
}
