/**
 * Where a CLI test file keeps its data dir and `serve`: per test (perTest, each ended after its test)
 * or one for the whole file (perFile), so no file repeats the start and clean-up blocks.
 */
import { afterAll, afterEach, beforeAll, expect } from "bun:test";
import { bootstrapKeyOf, startServe, tempDataDir, type Served, type TempDataDir } from "./cli.ts";

/** A test's data dir and `serve`, each set by the test when it makes one. */
export interface PerTest {
  data?: TempDataDir;
  served?: Served;
}

/** The slot a file's tests put their data dir and `serve` in: after each test the serve is killed and the dir removed. */
export function perTest(): PerTest {
  const t: PerTest = {};
  afterEach(() => {
    t.served?.kill();
    t.served = undefined;
    t.data?.cleanup();
    t.data = undefined;
  });
  return t;
}

/** A file's one data dir and `serve`: started before its tests, stopped after them (exit 0 expected), the dir removed. */
export interface PerFile {
  readonly dir: string;
  readonly server: Served;
  /** The data dir's bootstrap root key. */
  readonly rootKey: string;
}

export function perFile(): PerFile {
  let data: TempDataDir | undefined;
  let served: Served | undefined;
  let rootKey = "";
  beforeAll(async () => {
    data = tempDataDir();
    served = await startServe({ dataDir: data.dir });
    rootKey = bootstrapKeyOf(data.dir);
  });
  afterAll(async () => {
    try {
      if (served) expect(await served.stop()).toBe(0);
    } finally {
      served?.kill();
      data?.cleanup();
    }
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("serve did not start");
    return value;
  };
  return {
    get dir() { return started(data).dir; },
    get server() { return started(served); },
    get rootKey() { return rootKey; },
  };
}
