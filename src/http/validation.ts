/**
 * Request-body validation: a body that fails its operation's schema becomes our own 400, an
 * AppError `invalid_input` with one field error per problem (`body.credits.remaining`, at most
 * 64), made here and nowhere else. TypeBox's errors are worded as Elysia words them
 * (`mapValueError`), the wording clients have always seen. Not Elysia's ValidationError: outside
 * NODE_ENV=production its constructor pretty-prints the whole body into its message, which for a
 * large body holds the event loop far longer than the request's own work.
 */
import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { ValueError } from "@sinclair/typebox/errors";
import { mapValueError } from "elysia";
import { AppError, type FieldError } from "../errors/app-error.ts";

const MAX_FIELD_ERRORS = 64;

/** One failure as Elysia reports it: where (`/credits/remaining`) and what. */
export interface MappedError {
  path?: unknown;
  summary?: unknown;
  message: string;
}

/** Field errors naming each field (`body.credits.remaining`), each problem once. */
export function fieldErrors(type: string, errors: Iterable<MappedError>): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    const path = typeof e.path === "string" ? e.path : "";
    const location = `${type}${path.split("/").filter(Boolean).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join("")}`;
    const message = typeof e.summary === "string" && e.summary ? e.summary : e.message;
    const key = `${location}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ location, message });
  }
  return out;
}

/** The detail of a body that fails its operation's schema, in upstream's words; `errors` names each field. */
export function schemaFailureDetail(path: string): string {
  return `POST request body for '${path}' failed to validate schema`;
}

/** The 400 for a body of the operation at `path` that failed its schema. */
export function failedValidation(path: string, errors: FieldError[]): AppError {
  return new AppError("invalid_input", { detail: schemaFailureDetail(path), errors });
}

function mapped(errors: Iterable<ValueError>): MappedError[] {
  const out: MappedError[] = [];
  for (const error of errors) {
    const m = mapValueError(error);
    if (m) out.push(m);
    if (out.length >= MAX_FIELD_ERRORS) break;
  }
  return out;
}

/** Checks the bodies of the operation at `path` against its schema; `check` throws the 400 for a body that fails it. */
export class BodyValidator {
  private readonly compiled: TypeCheck<TSchema>;
  /** A `t.Optional` schema: the body may be left out (the list operations). */
  private readonly mayBeAbsent: boolean;

  constructor(schema: TSchema, private readonly path: string) {
    this.compiled = TypeCompiler.Compile(schema);
    this.mayBeAbsent = (schema as { [OptionalKind]?: unknown })[OptionalKind] === "Optional";
  }

  check(body: unknown): void {
    if (body === undefined && this.mayBeAbsent) return;
    if (!this.compiled.Check(body)) throw failedValidation(this.path, fieldErrors("body", mapped(this.compiled.Errors(body))));
  }
}
