/**
 * Request bodies as JSON: read within the route's bounds (body-reader.ts), then parsed whatever
 * the content type, and nested at most MAX_BODY_DEPTH levels. A body that is not JSON or nested
 * deeper is 400 before validation looks at it (and, for a small body, before authentication).
 * The depth bound is there because the schema validator and its error reporting recurse per
 * level: a few thousand nested arrays in a string field would exhaust their stack.
 */
import { AppError } from "../errors/app-error.ts";
import type { BodyRead, BodyReader } from "./body-reader.ts";

export const MAX_BODY_DEPTH = 100;

/** Parses a body read as text; an empty body parses as undefined (the schema then says what is missing). */
export function parseJsonText(text: string): unknown {
  if (text.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (cause) {
    throw new AppError("request_body_unreadable", { detail: `The request body is not valid JSON: ${(cause as Error).message}`, cause });
  }
  if (mayNestDeeperThan(text, MAX_BODY_DEPTH) && nestedDeeperThan(body, MAX_BODY_DEPTH)) {
    const message = `Nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`;
    throw new AppError("invalid_input", { detail: `The request body is ${message.charAt(0).toLowerCase()}${message.slice(1)}`, errors: [{ location: "body", message }] });
  }
  return body;
}

/**
 * False when `text` holds at most `maxDepth` opening brackets, which no nesting deeper than that
 * can do: most bodies are then not walked (the walk costs more than parsing a small body).
 */
function mayNestDeeperThan(text: string, maxDepth: number): boolean {
  let opening = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c === 0x7b || c === 0x5b) && ++opening > maxDepth) return true;
  }
  return false;
}

/** Walks objects and arrays with an explicit stack (no recursion) and stops at the first too deep. */
function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= maxDepth) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Reads and parses a request body. */
export async function parseJsonBody(reader: BodyReader, request: Request, read: BodyRead): Promise<unknown> {
  return parseJsonText(await reader.text(request, read));
}
