/**
 * `tollgate config check|print`. The configuration is read before any command runs, so a bad value
 * has already ended the run with exit 78 naming each variable, as serve does; check prints "ok".
 */
import { effectiveSettings } from "../config.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const CONFIG_HELP = `tollgate config check           exit 0 and "ok", or 78 naming each bad TOLLGATE_* variable
tollgate config print [--json]  the effective settings, NAME=value a line (an unset one empty), secrets masked`;

export function configCommand(args: string[], io: CliIo): number {
  const [sub, ...rest] = args;
  if (sub === "check") {
    if (parse(rest, {}).positionals.length > 0) throw new UsageError("config check takes no arguments");
    io.stdout("ok");
    return EXIT.ok;
  }
  if (sub === "print") {
    const { values, positionals } = parse(rest, { json: { type: "boolean" } });
    if (positionals.length > 0) throw new UsageError("config print takes no arguments");
    const settings = effectiveSettings(io.env);
    if (values.json === true) io.stdout(JSON.stringify(Object.fromEntries(settings.map(([name, value]) => [name, value ?? null])), null, 2));
    else for (const [name, value] of settings) io.stdout(`${name}=${value ?? ""}`);
    return EXIT.ok;
  }
  throw new UsageError(sub ? `unknown config command '${sub}'` : "config needs a command: check or print");
}
