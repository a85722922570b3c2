/** Builders and queries shared by the identities.* contract tests. */
import { expect } from "bun:test";
import type { Harness } from "../../../support/harness.ts";

export const IDENTITY_NOT_FOUND = "service/data/identity_not_found";
export const IDENTITY_EXISTS = "service/data/identity_already_exists";
export const NOT_FOUND_DETAIL = "This identity does not exist.";
export const REQUEST_ID = expect.stringMatching(/^req_/);
export const RATELIMIT_ID = expect.stringMatching(/^rl_[a-zA-Z0-9_]+$/);

const opts = (key?: string) => (key === undefined ? {} : { key });

/** Creates an identity and returns its id; fails on anything but 200. */
export async function createIdentity(h: Harness, externalId: string, extra: Record<string, unknown> = {}, key?: string): Promise<string> {
  const res = await h.post("/v2/identities.createIdentity", { externalId, ...extra }, opts(key));
  if (res.status !== 200) throw new Error(`createIdentity answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.identityId as string;
}

/** Reads an identity (by id or externalId) with the bootstrap key; fails on anything but 200. */
export async function getIdentity(h: Harness, identity: string): Promise<any> {
  const res = await h.post("/v2/identities.getIdentity", { identity });
  if (res.status !== 200) throw new Error(`getIdentity answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Verifies `key`, optionally naming limits; returns `data`. */
export async function verify(h: Harness, key: string, ratelimits?: Array<Record<string, unknown>>): Promise<any> {
  const res = await h.post("/v2/keys.verifyKey", ratelimits ? { key, ratelimits } : { key });
  if (res.status !== 200) throw new Error(`verifyKey answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Number of identity rows (live and deleted) with this externalId. */
export function identityRowCount(h: Harness, externalId: string): Promise<number> {
  return h.records.count("identities", "external_id = ?", externalId);
}
