/** A verification event as analytics stores it: verification's record, its tag set as sorted JSON text (equal sets group together), '' for no request id. */
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
