/**
 * Checks of `key create`'s flags, made before anything touches the data dir, with the API's rules
 * for the same fields (keys.createKey's schema), so a bad value is a usage error that names its flag.
 */
import type { CreateKeyInput } from "../services/keys/index.ts";
import { UsageError } from "./io.ts";
import { instantFlag } from "./args.ts";

type Values = Record<string, string | boolean | string[] | undefined>;

/** keys.createKey's bound on `expires` (2100-01-01). */
const LATEST_EXPIRY_MS = 4_102_444_800_000;

const PATTERNS: Record<string, [RegExp, string]> = {
  prefix: [/^[a-zA-Z0-9_]{1,16}$/, "1 to 16 letters, digits or '_'"],
  name: [/^[^]{1,255}$/, "1 to 255 characters"],
  "external-id": [/^[a-zA-Z0-9_.-]{1,255}$/, "1 to 255 letters, digits, '_', '.' or '-'"],
  permission: [/^[a-zA-Z0-9_:\-.*]{1,100}$/, "1 to 100 letters, digits or _ : - . *"],
  role: [/^[a-zA-Z0-9_:\-.*]{1,100}$/, "1 to 100 letters, digits or _ : - . *"],
};

/** The flag's value(s), each checked against its pattern. */
function checked(values: Values, flag: string): string[] {
  const raw = values[flag];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  const [pattern, rule] = PATTERNS[flag]!;
  for (const v of list) if (!pattern.test(v)) throw new UsageError(`--${flag} must be ${rule}, got '${v}'`);
  return list;
}

/** A whole number of credits, 0 or more. */
export function creditsValue(flag: string, text: string): number {
  const n = /^\d{1,15}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} must be a whole number of credits (0 or more), got '${text}'`);
  return n;
}

/** keys.createKey's input (less the API) from `key create`'s flags. */
export function createKeyFields(values: Values, nowMs: number): Omit<CreateKeyInput, "apiId"> {
  const input: Omit<CreateKeyInput, "apiId"> = {};
  const [prefix] = checked(values, "prefix");
  const [name] = checked(values, "name");
  const [externalId] = checked(values, "external-id");
  if (prefix !== undefined) input.prefix = prefix;
  if (name !== undefined) input.name = name;
  if (externalId !== undefined) input.externalId = externalId;
  const permissions = checked(values, "permission");
  const roles = checked(values, "role");
  if (permissions.length > 0) input.permissions = permissions;
  if (roles.length > 0) input.roles = roles;
  if (typeof values.credits === "string") input.credits = { remaining: creditsValue("--credits", values.credits) };
  if (typeof values.expires === "string") {
    const expires = instantFlag("expires", values.expires, nowMs, 1);
    // A past value would create a dead key: almost always seconds given for milliseconds, or a typo.
    if (expires <= nowMs) throw new UsageError(`--expires ${values.expires} is in the past`);
    if (expires > LATEST_EXPIRY_MS) throw new UsageError(`--expires ${values.expires} is after 2100-01-01, the latest expiry the API takes`);
    input.expires = expires;
  }
  if (typeof values.meta === "string") input.meta = metaObject(values.meta);
  if (values.recoverable === true) input.recoverable = true;
  return input;
}

function metaObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--meta must be a JSON object, got '${text}'`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError(`--meta must be a JSON object, got '${text}'`);
  return parsed as Record<string, unknown>;
}
