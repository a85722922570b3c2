/**
 * Body validation without Elysia's ValidationError (http/validation.ts) reports exactly the field
 * errors Elysia's ValidationError lists for the same body, and the renderer answers them as a 400.
 */
import { describe, expect, test } from "bun:test";
import { t, ValidationError } from "elysia";
import { AppError } from "../../src/errors/app-error.ts";
import { createErrorRenderer } from "../../src/http/errors.ts";
import { BodyValidator, fieldErrors, type MappedError } from "../../src/http/validation.ts";
import { silentLogger } from "../../src/lib/logger.ts";

const schema = t.Object({
  name: t.String({ minLength: 3, maxLength: 8 }),
  credits: t.Optional(t.Object({ remaining: t.Integer({ minimum: 0 }) }, { additionalProperties: false })),
  tags: t.Optional(t.Array(t.String({ maxLength: 3 }), { maxItems: 2 })),
}, { additionalProperties: false });

const renderer = createErrorRenderer(() => "", silentLogger);
const request = new Request("http://tollgate.test/v2/x.y", { method: "POST" });

async function rendered(error: unknown): Promise<{ status: number; errors: unknown }> {
  const response = renderer.render(error, "UNKNOWN", request, "req_1");
  return { status: response.status, errors: ((await response.json()) as { error: { errors: unknown } }).error.errors };
}

function thrownBy(body: unknown): unknown {
  try {
    new BodyValidator(schema, "/v2/test.op").check(body);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("BodyValidator", () => {
  test("accepts a body that fits the schema", () => {
    expect(thrownBy({ name: "abcd", credits: { remaining: 0 }, tags: ["a"] })).toBeUndefined();
  });

  test.each([
    ["a missing field", {}],
    ["an unknown field and a long name", { name: "x".repeat(20), pad: "y" }],
    ["nested and indexed fields", { name: "abc", credits: { remaining: -1, extra: 1 }, tags: ["long", 5, "ok"] }],
    ["not an object", "text"],
  ])("%s: the same field errors as Elysia's ValidationError", async (_, body) => {
    const error = thrownBy(body);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("invalid_input");
    const elysias = fieldErrors("body", new ValidationError("body", schema, body).all as MappedError[]);
    expect(await rendered(error)).toEqual({ status: 400, errors: elysias });
  });
});
