/** What a CLI command may touch of the outside world; main.ts provides the real one. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(line: string): void;
  stderr(line: string): void;
  /** Whether stderr is a terminal (a person reading), which TOLLGATE_LOG_FORMAT=auto writes text for. */
  stderrIsTerminal?: boolean;
  /** Resolves when the process is asked to stop (SIGTERM, SIGINT). */
  stopRequested(): Promise<string>;
}

export const EXIT = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

/** A usage mistake: exit 2 with the message and the command's help. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
