/** Flag parsing for the CLI commands, on node:util parseArgs; unknown flags and bad values are usage errors. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { DurationError, parseInstantMs } from "../lib/duration.ts";
import { UsageError } from "./io.ts";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse(args: string[], options: Options): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options: { help: { type: "boolean", short: "h" }, ...options }, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | string[] | undefined>, positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function requireString(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

/** A point in time from a flag (30d, 12h, an ISO date, Unix ms); a bad value is a usage error naming the flag. */
export function instantFlag(flag: string, text: string, nowMs: number, direction: 1 | -1): number {
  try {
    return parseInstantMs(text, nowMs, direction);
  } catch (e) {
    if (e instanceof DurationError) throw new UsageError(`--${flag}: ${e.message}`);
    throw e;
  }
}
