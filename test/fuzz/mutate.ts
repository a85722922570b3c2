/**
 * Hostile request bodies made from a valid one: every field (present in the valid body or named
 * by the route's OpenAPI schema) set to wrong types, huge strings, deep nesting, odd unicode,
 * numbers at and past its bounds; fields removed and added; duplicated keys and prototype keys
 * written into the JSON text; invalid JSON; wrong content types. Deterministic: the list depends
 * only on the valid body and the schema; the campaign samples it with a seeded PRNG.
 */

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

export interface Hostile {
  label: string;
  /** The raw body text sent. */
  text: string;
  contentType?: string;
}

type Path = Array<string | number>;

/** A value written verbatim into the JSON text (numbers JSON.stringify cannot express, e.g. 1e309). */
const raw = (text: string) => `@@raw@@${text}@@`;
const unraw = (json: string) => json.replace(/"@@raw@@(.*?)@@"/g, "$1");

const deepArray = (depth: number) => raw("[".repeat(depth) + "]".repeat(depth));
const deepObject = (depth: number) => raw('{"a":'.repeat(depth) + "1" + "}".repeat(depth));

/** Values of every wrong kind, whatever the field's type. */
const HOSTILE_VALUES: Array<[string, unknown]> = [
  ["null", null], ["true", true], ["zero", 0], ["negative", -1], ["fraction", 1.5], ["negative zero", raw("-0")],
  ["2^53", 2 ** 53], ["-2^53", -(2 ** 53)], ["1e308", 1e308], ["1e309 (Infinity)", raw("1e309")], ["-1e309", raw("-1e309")],
  ["exponent", raw("1E2")], ["empty string", ""], ["number as string", "1"], ["space", " "],
  ["long string (10k)", "x".repeat(10_000)], ["string over 1 MiB", "y".repeat(1024 * 1024 + 10)],
  ["unicode", "💥ℌ\u202e\u0301ＡＢ\uFEFF\u00A0"], ["NUL and controls", "a\u0000b\u0007\u001f"], ["lone surrogate", raw('"\\ud800x"')],
  ["sql", "' OR 1=1; DROP TABLE keys; --"], ["path", "../../etc/passwd"], ["empty array", []], ["empty object", {}],
  ["array of nulls", [null, null]], ["nested arrays (depth 5000)", deepArray(5000)], ["nested objects (depth 2000)", deepObject(2000)],
  ["__proto__ object", raw('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')],
  ["wide object", Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))],
];

/** Numbers and lengths at and just past a schema's bounds. */
function boundValues(s: Schema): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const type = s.type ?? s.anyOf?.find((x) => x.type !== "null")?.type;
  if (type === "integer" || type === "number") {
    if (s.minimum !== undefined) out.push([`minimum ${s.minimum}`, s.minimum], [`below minimum`, s.minimum - 1], ["minimum - 0.5", s.minimum - 0.5]);
    if (s.maximum !== undefined) out.push([`maximum ${s.maximum}`, s.maximum], [`above maximum`, s.maximum + 1], ["maximum + 0.5", s.maximum + 0.5]);
  }
  if (type === "string") {
    if (s.minLength !== undefined && s.minLength > 0) out.push(["below minLength", "z".repeat(s.minLength - 1)], ["at minLength", "z".repeat(s.minLength)]);
    if (s.maxLength !== undefined) out.push(["at maxLength", "m".repeat(s.maxLength)], ["above maxLength", "m".repeat(s.maxLength + 1)], ["maxLength of 4-byte chars", "😀".repeat(s.maxLength)]);
  }
  if (type === "array") {
    const item = s.items?.type === "string" ? "item" : s.items?.type === "object" ? {} : 1;
    if (s.maxItems !== undefined) out.push(["above maxItems", Array(s.maxItems + 1).fill(item)], ["at maxItems", Array(s.maxItems).fill(item)]);
    if (s.minItems !== undefined && s.minItems > 0) out.push(["below minItems", Array(s.minItems - 1).fill(item)]);
  }
  if (s.enum) out.push(["not in enum", "NOT_AN_ENUM_VALUE"], ["enum in other case", String(s.enum[0]).toUpperCase() + "x"]);
  return out;
}

/** Every field path of the schema (objects and array items, 4 levels deep) with its schema. */
function schemaFields(s: Schema | undefined, path: Path = [], depth = 0): Array<[Path, Schema]> {
  if (!s || depth > 4) return [];
  const out: Array<[Path, Schema]> = [];
  const object = s.properties ? s : s.anyOf?.find((x) => x.properties);
  for (const [name, child] of Object.entries(object?.properties ?? {})) {
    out.push([[...path, name], child], ...schemaFields(child, [...path, name], depth + 1));
  }
  const array = s.items ? s : s.anyOf?.find((x) => x.items);
  if (array?.items) out.push(...schemaFields(array.items, [...path, 0], depth + 1));
  return out;
}

/** Every path of the valid body itself (so a field of an array-bodied route is reached too). */
function bodyPaths(v: unknown, path: Path = [], depth = 0): Path[] {
  if (depth > 4 || v === null || typeof v !== "object") return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  return entries.flatMap(([k, x]) => [[...path, k], ...bodyPaths(x, [...path, k], depth + 1)]);
}

/** A copy of `body` with `value` at `path` (missing containers are made; `undefined` removes the field). */
function setAt(body: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== "object") node[key] = typeof path[path.indexOf(key) + 1] === "number" ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

const show = (path: Path) => path.join(".") || "(body)";

function fieldMutations(valid: unknown, schema: Schema | undefined): Hostile[] {
  const out: Hostile[] = [];
  const fields = new Map<string, [Path, Schema | undefined]>();
  for (const p of bodyPaths(valid)) fields.set(show(p), [p, undefined]);
  for (const [p, s] of schemaFields(schema)) fields.set(show(p), [p, s]);
  for (const [name, [path, s]] of fields) {
    const values = [...(s ? boundValues(s) : []), ...HOSTILE_VALUES];
    for (const [label, value] of values) out.push({ label: `${name} = ${label}`, text: unraw(JSON.stringify(setAt(valid, path, value))) });
    if (bodyPaths(valid).some((p) => show(p) === name)) out.push({ label: `${name} removed`, text: JSON.stringify(setAt(valid, path, undefined)) });
  }
  return out;
}

/** Keys written twice, and the prototype keys, spliced into the valid body's JSON text. */
function textMutations(valid: unknown): Hostile[] {
  const json = JSON.stringify(valid);
  const out: Hostile[] = [];
  const objectStart = json.indexOf("{");
  if (objectStart >= 0) {
    const splice = (label: string, members: string) =>
      out.push({ label, text: json.slice(0, objectStart + 1) + members + (json[objectStart + 1] === "}" ? "" : ",") + json.slice(objectStart + 1) });
    const firstKey = /"([^"]+)":/.exec(json.slice(objectStart))?.[1];
    if (firstKey) splice(`duplicated key ${firstKey} (first of two)`, `"${firstKey}":{"dup":1}`);
    if (firstKey) out.push({ label: `duplicated key ${firstKey} (last of two)`, text: json.replace(/}$|}]$/, (end) => `,"${firstKey}":[1,2]${end}`) });
    for (const key of ["__proto__", "constructor", "prototype"]) {
      splice(`${key} key`, `"${key}":{"polluted":true,"isAdmin":true}`);
      splice(`${key} key holding an array`, `"${key}":[1]`);
    }
    splice("__proto__ null", `"__proto__":null`);
    splice("hasOwnProperty key", `"hasOwnProperty":"x","toString":1,"valueOf":{}`);
  }
  return out;
}

const INVALID_JSON = [
  "", " ", "{", "}", "[", "{\"a\":}", "{'a':1}", "{\"a\":1,}", "[1,]", "NaN", "undefined", "null", "true", "0", "\"text\"", "[]",
  "{}", "[{}]", "[[]]", "\uFEFF{}", "{\"a\":1}{\"b\":2}", "{\"a\":\"\\x41\"}", "{\"a\":\"\\ud800\"}", "\u0000", "{\"a\":1}\u0000",
  "[".repeat(100_000), "{\"a\":".repeat(50_000), "1".repeat(10_000), `"${"\\".repeat(10_001)}"`,
];

const CONTENT_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/json; charset=latin1", ""];

function wholeBodyMutations(valid: unknown): Hostile[] {
  const json = JSON.stringify(valid);
  return [
    ...INVALID_JSON.map((text) => ({ label: `invalid or bare JSON ${JSON.stringify(text.slice(0, 20))}`, text })),
    { label: "truncated", text: json.slice(0, Math.max(1, json.length - 2)) },
    { label: "body wrapped in an array", text: `[${json}]` },
    { label: "unknown field", text: JSON.stringify(setAt(valid, Array.isArray(valid) ? [0, "notAField"] : ["notAField"], 1)) },
    { label: "form-encoded body", text: "a=1&b=2", contentType: "application/x-www-form-urlencoded" },
    ...CONTENT_TYPES.map((contentType) => ({ label: `valid body as '${contentType}'`, text: json, contentType })),
  ];
}

/** Every hostile variant of `valid` for a route whose body schema is `schema`. */
export function hostileBodies(valid: unknown, schema: Schema | undefined): Hostile[] {
  return [...wholeBodyMutations(valid), ...textMutations(valid), ...fieldMutations(valid, schema)];
}
