/** Flag parsing for the CLI commands, on node:util parseArgs; unknown flags are usage errors. */
import { parseArgs, type ParseArgsConfig } from "node:util";
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
