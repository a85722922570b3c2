/**
 * Request bodies: JSON only, at most 1 MiB. A larger body is 413, a body that is not JSON is 400;
 * both before validation or authentication look at it.
 */
import { AppError } from "../errors/app-error.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

function tooLarge(): AppError {
  return new AppError("request_body_too_large", { detail: `The request body is larger than ${MAX_BODY_BYTES} bytes.` });
}

/** Reads and parses a request body; an empty body parses as undefined (the schema then says what is missing). */
export async function parseJsonBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > MAX_BODY_BYTES) throw tooLarge();
  if (bytes.byteLength === 0) return undefined;
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new AppError("request_body_unreadable", { detail: `The request body is not valid JSON: ${(cause as Error).message}`, cause });
  }
}
