/**
 * keys.whoami: a key's details by its plaintext, as keys.getKey shows them. A key of another
 * workspace is 404; a missing `read_key` is 403 like on every route but verifyKey (DECISIONS).
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { keys } from "../../storage/schema/index.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { findApiByKeySpace } from "../apis/index.ts";
import { KEY_ELSEWHERE, KEY_MISSING } from "./target.ts";
import { buildKeyView } from "./view.ts";
import type { CreditBalances } from "../credits/index.ts";
import type { KeyView } from "./types.ts";

/** The live key with this plaintext. 404: unknown key or other workspace; 403 without `read_key` on its API. */
export function whoami(db: Db, credits: CreditBalances, principal: Principal, input: { key: string }): KeyView {
  const row = db.select().from(keys).where(and(eq(keys.hash, sha256Base64(input.key)), isNull(keys.deletedAt))).get();
  if (!row) throw new AppError("key_not_found", { detail: KEY_MISSING });
  if (row.workspaceId !== principal.workspaceId) throw new AppError("key_not_found", { detail: KEY_ELSEWHERE });
  const api = findApiByKeySpace(db, principal.workspaceId, row.keySpaceId);
  if (!api) throw new AppError("key_not_found", { detail: KEY_MISSING });
  requirePermission(principal, "api", api.id, "read_key");
  return buildKeyView(db, row, credits);
}
