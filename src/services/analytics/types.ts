/**
 * A verification event as analytics stores it: the plain record verification hands over, with its
 * tag set normalised to sorted JSON text (so equal sets group together) and '' for no request id.
 */
import type { VerificationEvent } from "../verification/index.ts";

export type { VerificationEvent, VerificationRecorder } from "../verification/index.ts";

export interface StoredEvent extends Omit<VerificationEvent, "tags" | "requestId"> {
  requestId: string;
  tags: string;
}

/** A tag set as stored: sorted, as JSON text. */
export function storedTags(tags: readonly string[]): string {
  return tags.length === 0 ? "[]" : JSON.stringify([...tags].sort());
}

export function toStored(e: VerificationEvent): StoredEvent {
  return {
    requestId: e.requestId ?? "", timeMs: e.timeMs, workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId,
    identityId: e.identityId, externalId: e.externalId, outcome: e.outcome, tags: storedTags(e.tags), spentCredits: e.spentCredits, latencyMs: e.latencyMs,
  };
}

