/**
 * Checks a JSON value against a schema of the served OpenAPI document: the subset our schemas use
 * (type, properties, required, additionalProperties as a schema, items, enum, const, anyOf). Enough
 * to tell whether an answer has the shape the document promises; bounds are not checked.
 */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
}

const typeOf = (value: unknown): string => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
};

/** Every way `value` departs from `schema`, each as `<path>: <problem>`; empty when it conforms. */
export function schemaProblems(schema: JsonSchema, value: unknown, at = "$"): string[] {
  if (schema.anyOf) {
    const each = schema.anyOf.map((s) => schemaProblems(s, value, at));
    return each.some((p) => p.length === 0) ? [] : [`${at}: matches none of anyOf (${each.map((p) => p[0]).join("; ")})`];
  }
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in enum`];
  if (schema.const !== undefined && schema.const !== value) return [`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`];
  const actual = typeOf(value);
  if (schema.type && schema.type !== actual && !(schema.type === "number" && actual === "integer")) return [`${at}: ${actual}, expected ${schema.type}`];
  if (actual === "array" && schema.items) return (value as unknown[]).flatMap((v, i) => schemaProblems(schema.items!, v, `${at}[${i}]`));
  if (actual !== "object") return [];
  const record = value as Record<string, unknown>;
  const problems = (schema.required ?? []).filter((k) => !(k in record)).map((k) => `${at}.${k}: missing`);
  for (const [key, v] of Object.entries(record)) {
    const declared = schema.properties?.[key] ?? Object.values(schema.patternProperties ?? {})[0]
      ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
    if (declared) problems.push(...schemaProblems(declared, v, `${at}.${key}`));
    else if (schema.properties && schema.additionalProperties !== true && !schema.patternProperties) problems.push(`${at}.${key}: not in the schema`);
  }
  return problems;
}
