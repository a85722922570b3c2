/**
 * The fingerprint of a master key that the cluster keeps in PostgreSQL, so that a node given another
 * key refuses to start. An HMAC under the key of a fixed label, not a hash of the key: the stored
 * value tells nothing about the key, and is no shortcut for guessing it (a guess costs an HMAC, as
 * it would against any ciphertext made with the key).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Changing the label changes every fingerprint: it is part of the stored format. */
const FINGERPRINT_LABEL = "tollgate master key fingerprint v1";

/** HMAC-SHA-256 of FINGERPRINT_LABEL under `key`, as 64 hex digits. */
export function masterKeyFingerprint(key: Uint8Array): string {
  return createHmac("sha256", key).update(FINGERPRINT_LABEL).digest("hex");
}

/** Whether `key`'s fingerprint is `fingerprint`, compared in constant time. */
export function matchesFingerprint(key: Uint8Array, fingerprint: string): boolean {
  const expected = Buffer.from(masterKeyFingerprint(key), "utf8");
  const given = Buffer.from(fingerprint, "utf8");
  return expected.length === given.length && timingSafeEqual(expected, given);
}
