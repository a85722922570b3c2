/**
 * Envelope encryption for recoverable keys: each workspace has a random 32-byte data key, stored
 * encrypted under the master key; key strings are encrypted under their workspace's data key.
 * AES-256-GCM throughout, with a fresh 12-byte IV per encryption; the stored form is
 * base64(iv ‖ ciphertext ‖ tag). Synchronous so it can run inside a SQLite transaction.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { dataKeys } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";

const IV_BYTES = 12;
const TAG_BYTES = 16;

function seal(key: Uint8Array, plaintext: Uint8Array): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64");
}

function open(key: Uint8Array, sealed: string): Buffer {
  const raw = Buffer.from(sealed, "base64");
  const iv = raw.subarray(0, IV_BYTES);
  const tag = raw.subarray(raw.length - TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
}

export class Vault {
  private readonly dataKeyCache = new Map<string, Uint8Array>();

  constructor(private readonly deps: { storage: Storage; clock: Clock; masterKey: Uint8Array }) {}

  /**
   * Makes sure the workspace has a data key. Call it before (never inside) the transaction that
   * stores a ciphertext, so a rolled-back transaction cannot lose a data key that is still cached.
   */
  prepare(workspaceId: string): void {
    if (this.dataKeyCache.has(workspaceId)) return;
    const db = this.deps.storage.db;
    const row = db.select().from(dataKeys).where(eq(dataKeys.workspaceId, workspaceId)).get();
    if (!row) {
      const sealed = seal(this.deps.masterKey, new Uint8Array(randomBytes(32)));
      db.insert(dataKeys).values({ workspaceId, encrypted: sealed, createdAt: this.deps.clock.now() }).onConflictDoNothing().run();
    }
    this.dataKey(workspaceId);
  }

  /** Encrypts a key string for a workspace; `prepare` must have run for it. */
  encrypt(workspaceId: string, plaintext: string): string {
    return seal(this.dataKey(workspaceId), new TextEncoder().encode(plaintext));
  }

  /** Decrypts what `encrypt` returned; throws when the ciphertext does not match, 412 when the master key does not. */
  decrypt(workspaceId: string, sealed: string): string {
    return open(this.dataKey(workspaceId), sealed).toString("utf8");
  }

  /** The workspace's data key; 412 when the master key is not the one it was sealed with. */
  private dataKey(workspaceId: string): Uint8Array {
    const cached = this.dataKeyCache.get(workspaceId);
    if (cached) return cached;
    const row = this.deps.storage.db.select().from(dataKeys).where(eq(dataKeys.workspaceId, workspaceId)).get();
    if (!row) throw new Error(`no data key for workspace ${workspaceId}: Vault.prepare was not called`);
    let key: Uint8Array;
    try {
      key = new Uint8Array(open(this.deps.masterKey, row.encrypted));
    } catch (cause) {
      throw new AppError("precondition_failed", {
        detail: "Recoverable keys are unavailable: the configured master key (TOLLGATE_MASTER_KEY or <data dir>/master.key) is not the one this workspace's keys were encrypted with.",
        cause,
      });
    }
    this.dataKeyCache.set(workspaceId, key);
    return key;
  }
}
