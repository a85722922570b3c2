/**
 * The bound of the `meta` objects of keys and identities: at most 1 MB of JSON, as upstream, where
 * 1 MB is 1,048,576 bytes of the object's UTF-8 JSON text as JSON.stringify writes it (compact), the
 * text that is stored and returned by every verification. Upstream counts Go's json.Marshal output,
 * which is the same text except that it escapes `<`, `>` and `&`. The 100-property bound is the
 * request schema's (http/schemas.ts).
 */
import { invalidInput } from "../../errors/app-error.ts";

export const MAX_META_BYTES = 1024 * 1024;

/** Throws 400 with upstream's detail when `meta` serialises to more than MAX_META_BYTES; null and undefined pass. */
export function assertMetaSize(meta: Record<string, unknown> | null | undefined): void {
  if (meta === undefined || meta === null) return;
  const json = JSON.stringify(meta);
  // A UTF-8 byte count is at most three times the UTF-16 length: count bytes only when it matters.
  if (json.length * 3 <= MAX_META_BYTES) return;
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > MAX_META_BYTES) {
    throw invalidInput("body.meta", `Metadata is too large, it must be less than 1MB, got: ${(bytes / MAX_META_BYTES).toFixed(2)}`);
  }
}
