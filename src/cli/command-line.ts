/**
 * What a command line asks for, read in one place: runCli dispatches on it, and main.ts asks it,
 * before the CLI is loaded, whether this is a `serve` to re-execute with the allocator setting
 * (allocator.ts). It imports nothing, so that asking does not load the program.
 */

/** `tollgate help`: the overview; `<command> --help`: that command's help; otherwise a command to run. */
export type CommandLine =
  | { kind: "usage" }
  | { kind: "version" }
  | { kind: "help"; command: string }
  | { kind: "run"; command: string; rest: string[] };

/** Reads `argv` (without the runtime and the program); no command is `serve`. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const [command = "serve", ...rest] = argv;
  if (command === "help" || command === "--help" || command === "-h") return { kind: "usage" };
  if (command === "version" || command === "--version") return { kind: "version" };
  if (rest.includes("--help") || rest.includes("-h")) return { kind: "help", command };
  return { kind: "run", command, rest };
}

/** Whether `argv` runs the `serve` command (not its help). */
export function runsServe(argv: readonly string[]): boolean {
  const line = parseCommandLine(argv);
  return line.kind === "run" && line.command === "serve";
}
