/** What verification hands on for each verification of a found key, and where: its own shapes, so no analytics type reaches it. */

export interface VerificationEvent {
  /** Unix ms. */
  timeMs: number;
  /** '' or absent when the request id is not known to the caller. */
  requestId?: string;
  workspaceId: string;
  keySpaceId: string;
  keyId: string;
  /** '' when the key has no identity. */
  identityId: string;
  externalId: string;
  /** The verification code, e.g. `VALID`, `RATE_LIMITED`. */
  outcome: string;
  /** As sent. */
  tags: readonly string[];
  /** Credits actually deducted from the key's balance by this verification. */
  spentCredits: number;
  latencyMs: number;
}

/** Where verification drops each event. Must not throw and must not block. */
export interface VerificationRecorder {
  record(event: VerificationEvent): void;
}
