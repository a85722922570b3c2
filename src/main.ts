/**
 * Entry point of the `tollgate` program: the only reader of process.env and process.argv, the
 * only place that installs signal handlers and calls process.exit.
 */
import { runCli, type CliIo } from "./cli/index.ts";

const stopRequested = new Promise<string>((resolve) => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve(signal));
});

const io: CliIo = {
  env: process.env,
  stdout: (line) => process.stdout.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
  stopRequested: () => stopRequested,
};

const code = await runCli(process.argv.slice(2), io);
process.exit(code);
