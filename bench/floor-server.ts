/**
 * The floor: the least that a key verification or a rate-limit check has to do over HTTP on this
 * stack, with none of tollgate's own work. For each request it reads the root key header and the
 * JSON body, answers with a request id in the body and in `x-request-id`, and sends the answers
 * of one event-loop turn together, with the pipeline's own pieces (src/http/pipeline.ts). keys.verifyKey also hashes the
 * key (SHA-256, as tollgate stores keys) and finds its record in a Map, which grows to one entry
 * per key seen; ratelimits.limit counts per identifier (a Map to a slot of a typed array). No
 * validation, no authentication, no SQLite, no credit spend committed, no analytics, no limits.
 * Whatever tollgate adds can only cost more: bench/floor.ts measures this against the echo.
 */
import { Ok } from "../src/http/envelope.ts";
import { envelopeJson, TurnEnd } from "../src/http/pipeline.ts";
import { jsonTextResponse } from "../src/http/json.ts";
import { sha256Base64 } from "../src/lib/hashing.ts";
import { newId } from "../src/lib/ids.ts";

interface KeyRecord {
  keyId: string;
  remaining: number;
  permissions: string[];
}

const keys = new Map<string, KeyRecord>();
const PERMISSIONS = ["documents.read"];
const slots = new Map<string, number>();
let counts = new Float64Array(1024);
const turnEnd = new TurnEnd();

/** The answer as the pipeline makes it: its envelope and headers, sent at the end of the turn. */
async function answer(requestId: string, data: unknown): Promise<Response> {
  const json = envelopeJson(requestId, new Ok(data));
  await turnEnd.next();
  return jsonTextResponse(json, 200, requestId);
}

async function verifyKey(request: Request): Promise<Response> {
  const requestId = newId("req");
  if (!request.headers.get("authorization")) return new Response("", { status: 401 });
  const body = JSON.parse(await request.text()) as { key: string };
  const hash = sha256Base64(body.key);
  let record = keys.get(hash);
  if (record === undefined) keys.set(hash, record = { keyId: newId("key"), remaining: 1_000_000_000, permissions: PERMISSIONS });
  record.remaining -= 1;
  return answer(requestId, { valid: true, code: "VALID", keyId: record.keyId, credits: record.remaining, enabled: true, permissions: record.permissions });
}

async function limit(request: Request): Promise<Response> {
  const requestId = newId("req");
  if (!request.headers.get("authorization")) return new Response("", { status: 401 });
  const body = JSON.parse(await request.text()) as { identifier: string; limit: number; duration: number };
  let slot = slots.get(body.identifier);
  if (slot === undefined) {
    slot = slots.size;
    slots.set(body.identifier, slot);
    if (slot >= counts.length) {
      const grown = new Float64Array(counts.length * 2);
      grown.set(counts);
      counts = grown;
    }
  }
  counts[slot]! += 1;
  const reset = Math.ceil(Date.now() / body.duration) * body.duration;
  return answer(requestId, { success: counts[slot]! <= body.limit, limit: body.limit, remaining: Math.max(0, body.limit - counts[slot]!), reset });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  routes: { "/v2/keys.verifyKey": { POST: verifyKey }, "/v2/ratelimits.limit": { POST: limit } },
  fetch: () => new Response("", { status: 404 }),
});
console.log(JSON.stringify({ msg: "floor listening", url: `http://127.0.0.1:${server.port}` }));
