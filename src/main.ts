/**
 * Entry point of the `tollgate` program: the only reader of process.env and process.argv, the
 * only place that installs signal handlers and calls process.exit. The same program, started by
 * `serve` with the hidden command below, is an analytics query process.
 */
import { writeSync } from "node:fs";
import { allocatorReexec } from "./cli/allocator.ts";
import { ANALYTICS_QUERY_PROCESS_COMMAND, runAnalyticsQueryProcess } from "./cli/analytics-query-process.ts";
import type { CliIo } from "./cli/index.ts";
import { EXIT } from "./cli/io.ts";
import { runProcessAtLowestPriority } from "./lib/thread-priority.ts";

/** An analytics query process: no signal handlers of ours, so SIGINT and SIGTERM end it as they should. */
async function queryProcess(): Promise<void> {
  // Before the program loads: starting costs CPU too, and a caller's query, however heavy, must
  // not slow the verifications of the `serve` beside it.
  runProcessAtLowestPriority();
  const send = process.send?.bind(process);
  if (!send) {
    writeSync(2, `${ANALYTICS_QUERY_PROCESS_COMMAND} is internal: \`tollgate serve\` starts it.\n`);
    process.exit(EXIT.usage);
  }
  await runAnalyticsQueryProcess({ send, onMessage: (handler) => process.on("message", handler) });
}

async function tollgate(): Promise<void> {
  // `serve` first restarts itself once, in place (same PID), with an allocator setting that mimalloc
  // reads only when a process starts: freed memory kept for reuse instead of returned and faulted
  // back in under load. When and how: src/cli/allocator.ts; the systemd unit sets it and skips this.
  const reexec = allocatorReexec({ argv: process.argv, env: process.env, execPath: process.execPath, execArgv: process.execArgv, main: Bun.main });
  if (reexec) {
    try {
      process.execve?.(reexec.file, reexec.args, reexec.env);
    } catch {
      // Not allowed here (a sandbox without execve): serve as it is, with the allocator's defaults.
    }
  }

  const stopRequested = new Promise<string>((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve(signal));
  });

  /**
   * stderr lines gathered during one turn of the event loop and written with one call: at full load
   * the access log writes a line per request, and a write per line would cost more than the request.
   */
  let stderrLines: string[] = [];
  function flushStderr(): void {
    if (stderrLines.length === 0) return;
    const text = stderrLines.join("");
    stderrLines = [];
    try {
      writeSync(2, text);
    } catch {
      // A non-blocking stderr that is full: hand the text to the stream, which queues it.
      process.stderr.write(text);
    }
  }

  const io: CliIo = {
    env: process.env,
    stdout: (line) => process.stdout.write(line + "\n"),
    stderr: (line) => {
      if (stderrLines.length === 0) setImmediate(flushStderr);
      stderrLines.push(line + "\n");
    },
    stopRequested: () => stopRequested,
    stderrIsTerminal: process.stderr.isTTY === true,
  };

  // Imported after the re-exec above, so that a `serve` that restarts itself loads the program once.
  const { runCli } = await import("./cli/index.ts");
  const code = await runCli(process.argv.slice(2), io);
  flushStderr();
  process.exit(code);
}

if (process.argv[2] === ANALYTICS_QUERY_PROCESS_COMMAND) await queryProcess();
else await tollgate();
