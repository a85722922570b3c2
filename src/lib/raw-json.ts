/**
 * JSON kept as its text: a large stored object (a key's meta) is put into an answer as it is, with
 * no parse when it is loaded and no serialisation when it is sent, the two steps that held the
 * event loop for milliseconds per megabyte.
 *
 * A value that holds a RawJson somewhere in its plain objects is marked (`markHoldsRawJson`), so
 * that `jsonText` walks only such values and every other one keeps JSON.stringify's native speed.
 * Anything else that serialises a RawJson (JSON.stringify anywhere) gets the parsed value through
 * `toJSON`: the same JSON content, only slower.
 */

export class RawJson {
  /** `text` must be valid JSON: it is sent as it is. */
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

const HOLDS_RAW_JSON: unique symbol = Symbol("holds RawJson");

/** Marks `value` as holding a RawJson in it or in one of its plain objects; JSON.stringify ignores the mark. */
export function markHoldsRawJson<T extends object>(value: T): T {
  (value as { [HOLDS_RAW_JSON]?: true })[HOLDS_RAW_JSON] = true;
  return value;
}

/** The JSON text of `value`, with the text of every RawJson in a marked value's plain objects put in as it is. */
export function jsonText(value: unknown): string {
  if (typeof value === "object" && value !== null && (value as { [HOLDS_RAW_JSON]?: true })[HOLDS_RAW_JSON] === true) return walk(value) as string;
  return JSON.stringify(value);
}

/** Like JSON.stringify; RawJson values spliced in, plain objects and arrays (a list page) walked, everything else to JSON.stringify. */
function walk(value: unknown): string | undefined {
  if (value instanceof RawJson) return value.text;
  // JSON.stringify writes null for an element it cannot serialise.
  if (Array.isArray(value)) return `[${value.map((element) => walk(element) ?? "null").join(",")}]`;
  if (typeof value !== "object" || value === null || !isPlainObject(value) || "toJSON" in value) return JSON.stringify(value);
  let out = "";
  for (const key in value) {
    const text = walk((value as Record<string, unknown>)[key]);
    // JSON.stringify leaves out the members whose value it cannot serialise (undefined, functions, symbols).
    if (text === undefined) continue;
    out += `${out === "" ? "{" : ","}${JSON.stringify(key)}:${text}`;
  }
  return out === "" ? "{}" : `${out}}`;
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
