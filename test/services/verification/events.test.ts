/**
 * Verification hands each event on as a plain record through a recorder it owns: nothing under
 * services/verification/ imports analytics, types included, and the record holds plain values.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { VerificationEvent } from "../../../src/services/verification/index.ts";

const DIR = resolve(import.meta.dir, "../../../src/services/verification");
const FROM = /\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

test("no file of verification imports analytics, not even a type", () => {
  const offending = readdirSync(DIR).filter((f) => f.endsWith(".ts")).flatMap((file) => {
    const code = readFileSync(join(DIR, file), "utf8");
    return [...code.matchAll(FROM)].map((m) => m[1] ?? m[2]!).filter((spec) => spec.includes("analytics")).map((spec) => `${file}: ${spec}`);
  });
  expect(offending).toEqual([]);
});

test("an event is a flat record of strings, numbers and its tag list, which survives a structured clone as it is", () => {
  const event: VerificationEvent = {
    timeMs: 1, requestId: "req_1", workspaceId: "ws", keySpaceId: "ks", keyId: "key", identityId: "id", externalId: "ext",
    outcome: "VALID", tags: ["a"], spentCredits: 2, latencyMs: 0.5,
  };
  expect(structuredClone(event)).toEqual(event);
});
