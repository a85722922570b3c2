/**
 * The cases both readers of the totals answer alike (totals.test.ts over analytics.db,
 * test/cluster/pg-totals.test.ts over PostgreSQL): events, the `since` asked, and the summary due.
 */
import type { VerificationSummary } from "../../../src/services/analytics/index.ts";
import type { EventFields } from "./support.ts";

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
export const hourStart = Date.UTC(2026, 5, 15, 10);

/** Events of ws_a's two APIs (api_b deleted) and of ws_b, before and after the middle of an hour and three hours later. */
export const MID_HOUR_EVENTS: EventFields[] = [
  { timeMs: hourStart + 10 * MINUTE_MS, outcome: "VALID" },
  { timeMs: hourStart + 40 * MINUTE_MS, outcome: "VALID" },
  { timeMs: hourStart + 59 * MINUTE_MS, outcome: "RATE_LIMITED" },
  { timeMs: hourStart + 3 * HOUR_MS, outcome: "VALID" },
  { timeMs: hourStart + 3 * HOUR_MS, outcome: "VALID", keySpaceId: "ks_b" },
  { timeMs: hourStart + 3 * HOUR_MS, outcome: "VALID", workspaceId: "ws_b" },
];

export const MID_HOUR_SINCE_MS = hourStart + 30 * MINUTE_MS;

/** ws_a's summary of MID_HOUR_EVENTS since MID_HOUR_SINCE_MS. */
export const MID_HOUR_SUMMARY: VerificationSummary = {
  sinceMs: MID_HOUR_SINCE_MS,
  total: 4,
  outcomes: { VALID: 3, RATE_LIMITED: 1 },
  apis: [
    { apiId: "api_a", name: "first", total: 3, outcomes: { VALID: 2, RATE_LIMITED: 1 } },
    // A deleted API's verifications still count, under its id.
    { apiId: "api_b", name: "second", total: 1, outcomes: { VALID: 1 } },
  ],
};

/** Totals from these times on, of ws_a's MID_HOUR_EVENTS: a minute's start counts it, a millisecond later does not. */
export const MID_HOUR_LATER: Array<[number, number]> = [[hourStart + 59 * MINUTE_MS, 3], [hourStart + 59 * MINUTE_MS + 1, 2]];
