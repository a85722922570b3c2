/** Human durations and points in time for the command line. */
import { describe, expect, test } from "bun:test";
import { DurationError, parseDurationMs, parseInstantMs } from "../../src/lib/duration.ts";

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);

describe("parseDurationMs", () => {
  test("each unit", () => {
    expect(parseDurationMs("500ms")).toBe(500);
    expect(parseDurationMs("45s")).toBe(45_000);
    expect(parseDurationMs("90m")).toBe(5_400_000);
    expect(parseDurationMs("12h")).toBe(43_200_000);
    expect(parseDurationMs("30d")).toBe(2_592_000_000);
    expect(parseDurationMs("2w")).toBe(1_209_600_000);
  });
  test("plain digits are milliseconds", () => expect(parseDurationMs("1500")).toBe(1500));
  test.each(["", "d", "-5m", "1.5h", "5 minutes", "10y", "99999999999999999999d"])("refuses %p", (text) => {
    expect(() => parseDurationMs(text)).toThrow(DurationError);
  });
});

describe("parseInstantMs", () => {
  test("a duration counts forward for an expiry and back for a since", () => {
    expect(parseInstantMs("30d", NOW, 1)).toBe(NOW + 30 * 86_400_000);
    expect(parseInstantMs("7d", NOW, -1)).toBe(NOW - 7 * 86_400_000);
  });
  test("an ISO date is UTC midnight; with a time and no zone, UTC; with a zone, that zone", () => {
    expect(parseInstantMs("2027-01-31", NOW, 1)).toBe(Date.UTC(2027, 0, 31));
    expect(parseInstantMs("2028-02-29", NOW, 1)).toBe(Date.UTC(2028, 1, 29));
    expect(parseInstantMs("2027-01-31T12:30:00", NOW, 1)).toBe(Date.UTC(2027, 0, 31, 12, 30));
    expect(parseInstantMs("2027-01-31T12:30:00+02:00", NOW, 1)).toBe(Date.UTC(2027, 0, 31, 10, 30));
  });
  test("Unix milliseconds are taken as they are", () => expect(parseInstantMs("1800000000000", NOW, 1)).toBe(1_800_000_000_000));
  test.each(["2027-02-30", "2027-02-29", "2027-02-30x", "tomorrow", "2027-13-45", "Jan 5 2027"])("refuses %p", (text) => {
    expect(() => parseInstantMs(text, NOW, 1)).toThrow(DurationError);
  });
});
