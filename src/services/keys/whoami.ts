/**
 * keys.whoami: a key's details by its plaintext, as keys.getKey shows them. A key of another
 * workspace is not even read, so it gets the unknown key's 404 word for word; a missing `read_key`
 * is 403 like on every route but verifyKey (DECISIONS).
 */
import type { Records } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { KEY_MISSING, keyNotFound } from "./target.ts";
import { keyViewIn } from "./view.ts";
import type { CreditBalances } from "../credits/index.ts";
import type { KeyView } from "./types.ts";

/** The live key with this plaintext. 404: unknown key or other workspace (one answer); 403 without `read_key` on its API. */
export function* whoamiIn(records: Records, credits: CreditBalances, principal: Principal, input: { key: string }): Work<KeyView> {
  const ws = principal.workspaceId;
  const row = yield* step(records.keys.findByHash(ws, sha256Base64(input.key)));
  const api = row && (yield* step(records.apis.findByKeySpace(ws, row.keySpaceId)));
  if (!row || !api) throw keyNotFound(KEY_MISSING);
  requirePermission(principal, "api", api.id, "read_key");
  return yield* keyViewIn(records, row, credits);
}
