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

/** An event as it crosses to the writer thread: its fields in a fixed order. */
type EventRow = [number, string, string, string, string, string, string, string, readonly string[], number, number];

/**
 * Events as one JSON text of arrays, to hand to the writer thread: a string crosses without a copy
 * of each event, and JSON of arrays costs the main thread a fraction of JSON, or a structured clone, of objects.
 */
export function eventsText(events: readonly VerificationEvent[]): string {
  return JSON.stringify(events.map((e): EventRow => [
    e.timeMs, e.requestId ?? "", e.workspaceId, e.keySpaceId, e.keyId, e.identityId, e.externalId, e.outcome, e.tags, e.spentCredits, e.latencyMs,
  ]));
}

/** The events of an `eventsText`, as stored. */
export function storedFromText(text: string): StoredEvent[] {
  return (JSON.parse(text) as EventRow[]).map(([timeMs, requestId, workspaceId, keySpaceId, keyId, identityId, externalId, outcome, tags, spentCredits, latencyMs]) => ({
    timeMs, requestId, workspaceId, keySpaceId, keyId, identityId, externalId, outcome, tags: storedTags(tags), spentCredits, latencyMs,
  }));
}
