import type { ErrorCode } from "./catalogue.ts";

/** One problem with one field of a request: shown in `error.errors[]` of a 400. */
export interface FieldError {
  location: string;
  message: string;
  fix?: string;
}

/** The only error the service throws on purpose; one handler renders it into the envelope. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  /** Seconds after which a retry may succeed: sent as `Retry-After` (429s and 503s). */
  readonly retryAfterS: number | undefined;

  constructor(code: ErrorCode, opts: { detail: string; errors?: FieldError[]; cause?: unknown; retryAfterS?: number }) {
    super(opts.detail, { cause: opts.cause });
    this.name = "AppError";
    this.code = code;
    this.detail = opts.detail;
    this.errors = opts.errors;
    this.retryAfterS = opts.retryAfterS;
  }
}

/** Shorthand for a 400 naming one field. */
export function invalidInput(location: string, message: string, fix?: string): AppError {
  return new AppError("invalid_input", { detail: message, errors: [{ location, message, ...(fix ? { fix } : {}) }] });
}
