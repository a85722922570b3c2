/**
 * Request bodies: JSON only, at most 1 MiB. A larger body is 413, a body that is not JSON is 400;
 * both before validation or authentication look at it.
 */
import { AppError } from "../errors/app-error.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

function tooLarge(): AppError {
  return new AppError("request_body_too_large", { detail: `The request body is larger than ${MAX_BODY_BYTES} bytes.` });
}

/** 413 before reading a body whose declared length is already too large. */
export function refuseDeclaredTooLarge(request: Request): void {
  if (Number(request.headers.get("content-length") ?? "0") > MAX_BODY_BYTES) throw tooLarge();
}

/** Parses a body read as text; an empty body parses as undefined (the schema then says what is missing). */
export function parseJsonText(text: string): unknown {
  // A UTF-8 byte count is at least the UTF-16 length and at most three times it: count bytes only when it matters.
  if (text.length > MAX_BODY_BYTES || (text.length > MAX_BODY_BYTES / 3 && Buffer.byteLength(text) > MAX_BODY_BYTES)) throw tooLarge();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new AppError("request_body_unreadable", { detail: `The request body is not valid JSON: ${(cause as Error).message}`, cause });
  }
}

/** Reads and parses a request body. */
export async function parseJsonBody(request: Request): Promise<unknown> {
  refuseDeclaredTooLarge(request);
  return parseJsonText(await request.text());
}
