/** The logger's two formats: JSON lines, and text lines that read back to the same fields. */
import { describe, expect, test } from "bun:test";
import { createLogger, formatTextLine, type LogFields } from "../../src/lib/logger.ts";
import { parseTextLine } from "../support/text-log.ts";

const TIME = "2026-11-27T05:00:00.000Z";

describe("text format", () => {
  test("the start line reads as the operator expects", () => {
    expect(formatTextLine(TIME, "info", "tollgate listening", { url: "http://127.0.0.1:8080", dataDir: "./data" }))
      .toBe(`${TIME} INFO tollgate listening url=http://127.0.0.1:8080 dataDir=./data`);
  });

  test("every kind of value parses back to what the JSON line holds", () => {
    const fields: LogFields = {
      plain: "req_abc", spaced: "two words", quoted: 'say "hi"', equals: "a=b", empty: "", digits: "123", negative: "-1",
      literal: "true", nullish: "null", bracket: "[x", inner: "a{b]c", escape: "\u001b[31mred", backslash: "a\\b", number: 4.25, integer: 0, yes: false, none: null,
      list: ["one", "two words"], object: { name: "Error", stack: "Error: x\n    at f (a.ts:1:1)" },
    };
    const line = formatTextLine(TIME, "warn", "something happened", fields);
    expect(line).not.toMatch(/[\n\u001b]/);
    expect(parseTextLine(line)).toEqual({ time: TIME, level: "warn", msg: "something happened", ...fields });
  });

  test("a message with = or a quote is quoted, so it cannot pass for a field", () => {
    const line = formatTextLine(TIME, "error", 'odd msg=1 "x"', { n: 1 });
    expect(parseTextLine(line)).toEqual({ time: TIME, level: "error", msg: 'odd msg=1 "x"', n: 1 });
  });

  test("undefined fields are left out, as in JSON", () => {
    expect(formatTextLine(TIME, "debug", "m", { a: undefined, b: 1 })).toBe(`${TIME} DEBUG m b=1`);
  });

  test("createLogger writes text lines at and above its level", () => {
    const lines: string[] = [];
    const logger = createLogger("info", (l) => lines.push(l), "text");
    logger.debug("hidden");
    logger.info("shown", { k: "v" });
    expect(lines).toHaveLength(1);
    expect(parseTextLine(lines[0]!)).toMatchObject({ level: "info", msg: "shown", k: "v" });
  });
});

test("json stays the default format", () => {
  const lines: string[] = [];
  createLogger("info", (l) => lines.push(l)).info("shown", { k: "v" });
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "info", msg: "shown", k: "v" });
});
