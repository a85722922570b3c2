/** The shapes of a verification event: as recorded on the hot path, and as stored. */

export interface VerificationEvent {
  /** Unix ms. */
  timeMs: number;
  /** '' when the request id is not known to the caller. */
  requestId?: string;
  workspaceId: string;
  keySpaceId: string;
  keyId: string;
  /** '' when the key has no identity. */
  identityId: string;
  externalId: string;
  /** The verification code, e.g. `VALID`, `RATE_LIMITED`. */
  outcome: string;
  /** As sent; sorted into JSON text when written, off the hot path. */
  tags: readonly string[];
  /** Credits actually deducted from the key's balance by this verification. */
  spentCredits: number;
  latencyMs: number;
}

/** What verification needs: a place to drop an event. Must not throw and must not block. */
export interface VerificationRecorder {
  record(event: VerificationEvent): void;
}

/** An event as stored: tags normalised to sorted JSON text, so equal tag sets group together. */
export interface StoredEvent extends Omit<VerificationEvent, "requestId" | "tags"> {
  requestId: string;
  tags: string;
}

/** A tag set as stored: sorted, as JSON text, so equal sets group together in the rollups. */
export function storedTags(tags: readonly string[]): string {
  return tags.length === 0 ? "[]" : JSON.stringify([...tags].sort());
}

export function toStored(e: VerificationEvent): StoredEvent {
  return {
    requestId: e.requestId ?? "",
    timeMs: e.timeMs,
    workspaceId: e.workspaceId,
    keySpaceId: e.keySpaceId,
    keyId: e.keyId,
    identityId: e.identityId,
    externalId: e.externalId,
    outcome: e.outcome,
    tags: storedTags(e.tags),
    spentCredits: e.spentCredits,
    latencyMs: e.latencyMs,
  };
}
