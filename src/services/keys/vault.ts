/**
 * Envelope encryption for recoverable keys: each workspace has a random 32-byte data key, stored
 * encrypted under the master key; key strings are encrypted under their workspace's data key.
 * AES-256-GCM throughout, with a fresh 12-byte IV per encryption; the stored form is
 * base64(iv ‖ ciphertext ‖ tag). Encryption and decryption are synchronous, with the workspace's
 * data key read beforehand (prepare, loadIn), so that they can run inside a unit of work.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { RecordBackend, Records } from "../../storage/records/index.ts";
import { step, then, type Maybe, type Work } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { andThen } from "./and-then.ts";
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

  constructor(private readonly deps: { records: RecordBackend; clock: Clock; masterKey: Uint8Array }) {}

  /**
   * Makes sure the workspace has a data key, and holds it. Call it before (never inside) the unit
   * that stores a ciphertext, so a rolled-back unit cannot lose a data key that is still held.
   * 412 when the master key is not the one the data key was sealed with.
   */
  prepare(workspaceId: string): Maybe<void> {
    if (this.dataKeyCache.has(workspaceId)) return;
    const { records, masterKey, clock } = this.deps;
    const found = records.read((r) => step(r.keys.findDataKey(workspaceId)));
    const sealed = andThen(found, (existing) => existing ?? records.write(workspaceId, function* (r) {
      // Another process may have stored one since: the insert keeps it, and the read answers it.
      yield r.keys.insertDataKey({ workspaceId, encrypted: seal(masterKey, new Uint8Array(randomBytes(32))), createdAt: clock.now() });
      return (yield* step(r.keys.findDataKey(workspaceId))) as string;
    }));
    return then(sealed, (s) => this.hold(workspaceId, s));
  }

  /**
   * Holds the workspace's data key, when it has one, inside a reading unit (the data key never
   * changes, so holding it from a unit that runs again does no harm). Throws as `prepare` does.
   */
  *loadIn(records: Records, workspaceId: string): Work<void> {
    if (this.dataKeyCache.has(workspaceId)) return;
    const sealed = yield* step(records.keys.findDataKey(workspaceId));
    if (sealed !== undefined) this.hold(workspaceId, sealed);
  }

  /** Encrypts a key string for a workspace; `prepare` must have run for it. */
  encrypt(workspaceId: string, plaintext: string): string {
    return seal(this.dataKey(workspaceId), new TextEncoder().encode(plaintext));
  }

  /** Decrypts what `encrypt` returned (`prepare` or `loadIn` first); throws when the ciphertext does not match. */
  decrypt(workspaceId: string, sealed: string): string {
    return open(this.dataKey(workspaceId), sealed).toString("utf8");
  }

  private dataKey(workspaceId: string): Uint8Array {
    const key = this.dataKeyCache.get(workspaceId);
    if (!key) throw new Error(`no data key for workspace ${workspaceId}: Vault.prepare was not called`);
    return key;
  }

  /** Opens a sealed data key and holds it; 412 when the master key is not the one it was sealed with. */
  private hold(workspaceId: string, sealed: string): void {
    let key: Uint8Array;
    try {
      key = new Uint8Array(open(this.deps.masterKey, sealed));
    } catch (cause) {
      throw new AppError("precondition_failed", {
        detail: "Recoverable keys are unavailable: the configured master key (TOLLGATE_MASTER_KEY or <data dir>/master.key) is not the one this workspace's keys were encrypted with.",
        cause,
      });
    }
    this.dataKeyCache.set(workspaceId, key);
  }
}
