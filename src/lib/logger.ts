/**
 * One-line logs, as JSON (one object per line) or as text for a human reading a terminal
 * (`<time> <LEVEL> <msg> key=value …`). Secrets (keys, root keys) are never passed here.
 * In text, a string is written bare only when it cannot be read back as anything else, so that a
 * line parses back to the same fields as its JSON twin.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "json" | "text";
/** What TOLLGATE_LOG_FORMAT says: a format, or `auto`, text for a person at a terminal and JSON for a collector. */
export type LogFormatSetting = LogFormat | "auto";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Whether a line at `level` would be written: lets hot paths skip building its fields. */
  enabled(level: LogLevel): boolean;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * A string that reads back as itself: no space, control character, quote, `=`, backslash or
 * bracket, and not a JSON number or literal. Anything else (a client's path included) is quoted.
 */
const BARE_STRING = /^(?![-\d]|(?:true|false|null)$)[^\s\x00-\x1f\x7f"=\\[\]{}]+$/;
const BARE_MESSAGE = /^[^\x00-\x1f\x7f"=]*$/;

function textValue(value: unknown): string {
  if (typeof value === "string" && BARE_STRING.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** One entry as a text line; fields whose value is undefined are left out, as JSON.stringify does. */
export function formatTextLine(time: string, level: LogLevel, msg: string, fields?: LogFields): string {
  let line = `${time} ${level.toUpperCase()} ${BARE_MESSAGE.test(msg) ? msg : JSON.stringify(msg)}`;
  if (fields) for (const key in fields) if (fields[key] !== undefined) line += ` ${key}=${textValue(fields[key])}`;
  return line;
}

/** The format `setting` means when the log goes to a terminal or not. */
export function resolveLogFormat(setting: LogFormatSetting, toTerminal: boolean): LogFormat {
  if (setting !== "auto") return setting;
  return toTerminal ? "text" : "json";
}

/** A logger that writes lines at `level` or above, in `format`, to `write` (stderr by default). */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l + "\n"), format: LogFormat = "json"): Logger {
  const emit = (lvl: LogLevel) => (msg: string, fields?: LogFields) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const time = new Date().toISOString();
    write(format === "text" ? formatTextLine(time, lvl, msg, fields) : JSON.stringify({ time, level: lvl, msg, ...fields }));
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error"), enabled: (lvl) => ORDER[lvl] >= ORDER[level] };
}

/** A logger that drops everything: for tests that do not look at logs. */
export const silentLogger: Logger = createLogger("error", () => {});
