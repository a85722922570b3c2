/**
 * `@unkey/api` clients for the SDK tests. The SDK fixes its server URL when a client is made, and a
 * file's server (testServer()) starts only after the file's top level has run, so sdkFor() makes
 * the client on first use for each server.
 */
import { Unkey } from "@unkey/api";
import type { Harness } from "../support/harness.ts";

/** A client of the server `h` with `rootKey`, that never retries (a retry would hide an answer). */
export function sdkClient(h: Harness, rootKey: string): Unkey {
  return new Unkey({ rootKey, serverURL: h.url, retryConfig: { strategy: "none" } });
}

/** A client with the bootstrap root key of whichever server `h` forwards to when it is used. */
export function sdkFor(h: Harness): Unkey {
  let made: { url: string; client: Unkey } | undefined;
  const current = (): Unkey => {
    if (made?.url !== h.url) made = { url: h.url, client: sdkClient(h, h.rootKey) };
    return made.client;
  };
  return new Proxy({} as Unkey, { get: (_target, property) => Reflect.get(current(), property) });
}
