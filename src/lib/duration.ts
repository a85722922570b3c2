/**
 * Durations and points in time as people type them on a command line: a whole number with a unit
 * (ms, s, m, h, d or w); a point in time is also an ISO 8601 date, with or without a time and a
 * zone, or Unix milliseconds. Plain digits stay milliseconds, as in the API.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d+)(ms|s|m|h|d|w)?$/;
/** A calendar date, optionally with a time and a zone; anything else that Date.parse would guess at is refused. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export class DurationError extends Error {}

/** The runtime's date parser rolls 2027-02-30 over to March; a typo should be refused instead. */
function isCalendarDate(iso: string): boolean {
  const [year, month, day] = iso.slice(0, 10).split("-").map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `30d` → 2592000000. Plain digits are milliseconds. Throws DurationError on anything else. */
export function parseDurationMs(text: string): number {
  const match = DURATION.exec(text.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] ?? "ms"]! : NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new DurationError(`'${text}' is not a duration: use a whole number with a unit (500ms, 45s, 90m, 12h, 30d, 2w) or milliseconds`);
  }
  return ms;
}

/**
 * A point in time: a duration counted from `nowMs` (forward for `direction` 1, as an expiry;
 * back for -1, as `--since`), an ISO 8601 date (UTC unless it names a zone), or Unix milliseconds.
 */
export function parseInstantMs(text: string, nowMs: number, direction: 1 | -1): number {
  const trimmed = text.trim();
  if (ISO_DATE.test(trimmed)) {
    const withZone = /T|\s/.test(trimmed) && !/(Z|[+-]\d{2}:?\d{2})$/.test(trimmed) ? `${trimmed}Z` : trimmed;
    const ms = Date.parse(withZone.replace(" ", "T"));
    if (Number.isNaN(ms) || !isCalendarDate(trimmed)) throw new DurationError(`'${text}' is not a valid date`);
    return ms;
  }
  // Digits alone: Unix milliseconds (an absolute time), as the API takes them.
  if (/^\d+$/.test(trimmed)) return parseDurationMs(trimmed);
  try {
    return nowMs + direction * parseDurationMs(trimmed);
  } catch {
    throw new DurationError(`'${text}' is not a time: use a duration (30d, 12h), an ISO date (2027-01-31) or Unix milliseconds`);
  }
}
