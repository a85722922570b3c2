/** The shapes of a verification event: as recorded on the hot path, and as stored. */

/**
 * Whom a verification is counted for: a key and what it belongs to. Verification keeps one per
 * cached key and passes that same object with each of the key's events, so the event buffer
 * remembers the five strings' dictionary references by the object (event-buffer.ts) instead of
 * looking the five strings up in the dictionary for every event, which showed in CPU profiles of
 * the server under load.
 */
export interface EventSubject {
  readonly workspaceId: string;
  readonly keySpaceId: string;
  readonly keyId: string;
  /** '' when the key has no identity. */
  readonly identityId: string;
  readonly externalId: string;
}

export interface VerificationEvent {
  /** Unix ms. */
  timeMs: number;
  /** '' when the request id is not known to the caller. */
  requestId?: string;
  subject: EventSubject;
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

/** An event as stored: its subject's fields its own, tags normalised to sorted JSON text, so equal tag sets group together. */
export interface StoredEvent extends EventSubject {
  requestId: string;
  timeMs: number;
  outcome: string;
  tags: string;
  spentCredits: number;
  latencyMs: number;
}

/** A tag set as stored: sorted, as JSON text, so equal sets group together in the rollups. */
export function storedTags(tags: readonly string[]): string {
  return tags.length === 0 ? "[]" : JSON.stringify([...tags].sort());
}

export function toStored(e: VerificationEvent): StoredEvent {
  return {
    requestId: e.requestId ?? "",
    timeMs: e.timeMs,
    workspaceId: e.subject.workspaceId,
    keySpaceId: e.subject.keySpaceId,
    keyId: e.subject.keyId,
    identityId: e.subject.identityId,
    externalId: e.subject.externalId,
    outcome: e.outcome,
    tags: storedTags(e.tags),
    spentCredits: e.spentCredits,
    latencyMs: e.latencyMs,
  };
}

/** The subject of a stored event, as a new object (the events of a write that failed, made again). */
export function subjectOf(e: EventSubject): EventSubject {
  return { workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId, identityId: e.identityId, externalId: e.externalId };
}
