/**
 * TOLLGATE_LOG_FORMAT=auto (the default): text lines for a person at a terminal, JSON lines where a
 * collector reads stderr (systemd's journal, a pipe); an explicit format wins either way. The CLI
 * runs in this process with an io that says whether stderr is a terminal, as main.ts tells it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCli, type CliIo } from "../../src/cli/index.ts";
import { tempDataDir } from "../support/cli.ts";

const data = tempDataDir();
afterAll(() => data.cleanup());
let runs = 0;

/** `tollgate migrate`'s lines about its migrations, on a data dir of its own, with TOLLGATE_LOG_FORMAT `format` (unset when undefined). */
async function migrateLog(stderrIsTerminal: boolean, format?: string): Promise<string[]> {
  const lines: string[] = [];
  const io: CliIo = {
    env: { TOLLGATE_DATA_DIR: join(data.dir, String(runs++)), ...(format === undefined ? {} : { TOLLGATE_LOG_FORMAT: format }) },
    stdout: () => undefined,
    stderr: (line) => lines.push(line),
    stderrIsTerminal,
    stopRequested: () => new Promise(() => undefined),
  };
  expect(await runCli(["migrate"], io)).toBe(0);
  return lines.filter((line) => line.includes("migrations"));
}

const TEXT_LINE = /^\d{4}-\d\d-\d\dT\S+Z INFO /;

describe("TOLLGATE_LOG_FORMAT", () => {
  test("unset, on a terminal: '<time> <LEVEL> <message> key=value …' lines", async () => {
    const lines = await migrateLog(true);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(TEXT_LINE);
  });

  test("unset, not a terminal (the journal, a pipe): one JSON object a line", async () => {
    const lines = await migrateLog(false);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: "info" });
  });

  test("json on a terminal, and text elsewhere: the setting wins", async () => {
    for (const line of await migrateLog(true, "json")) expect(JSON.parse(line)).toMatchObject({ level: "info" });
    for (const line of await migrateLog(false, "text")) expect(line).toMatch(TEXT_LINE);
  });
});
