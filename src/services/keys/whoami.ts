/**
 * keys.whoami: a key's details by its plaintext, as keys.getKey shows them. A key of another
 * workspace is not even read, so it gets the unknown key's 404 word for word; a missing `read_key`
 * is 403 like on every route but verifyKey (DECISIONS).
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { keys } from "../../storage/schema/index.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { findApiByKeySpace } from "../apis/index.ts";
import { KEY_MISSING, keyNotFound } from "./target.ts";
import { buildKeyView } from "./view.ts";
import type { CreditBalances } from "../credits/index.ts";
import type { KeyView } from "./types.ts";

/** The live key with this plaintext. 404: unknown key or other workspace (one answer); 403 without `read_key` on its API. */
export function whoami(db: Db, credits: CreditBalances, principal: Principal, input: { key: string }): KeyView {
  const ws = principal.workspaceId;
  const row = db.select().from(keys).where(and(eq(keys.hash, sha256Base64(input.key)), eq(keys.workspaceId, ws), isNull(keys.deletedAt))).get();
  const api = row && findApiByKeySpace(db, ws, row.keySpaceId);
  if (!row || !api) throw keyNotFound(KEY_MISSING);
  requirePermission(principal, "api", api.id, "read_key");
  return buildKeyView(db, row, credits);
}
