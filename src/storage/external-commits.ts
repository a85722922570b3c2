/**
 * Notices commits made to a database by another connection (another process, such as a CLI command
 * beside `serve`), through SQLite's `PRAGMA data_version`, so that what a process keeps of the
 * database in memory can be dropped or reloaded. A connection's own commits and the checkpoints of
 * the checkpointer's thread (PASSIVE, RESTART) do not change `data_version`. The pragma is a large
 * share of a cached verification's cost, so it is read at most once per millisecond of wall time: a commit elsewhere is seen by every look a millisecond or more after it. One watcher per
 * database runs every reaction in one given order (see boot.ts).
 */
import type { Database, Statement } from "bun:sqlite";

/** What a cache of the database calls before it answers from memory. */
export interface ChangesElsewhere {
  look(): void;
}

export class ExternalCommits implements ChangesElsewhere {
  private readonly dataVersion: Statement<{ data_version: number }, []>;
  private seenDataVersion: number;
  private readAtMs = Number.NEGATIVE_INFINITY;

  /** `onCommit` runs on the first look after another connection committed, counted from now; `wallMs` for tests. */
  constructor(sqlite: Database, private readonly onCommit: () => void, private readonly wallMs: () => number = () => performance.now()) {
    this.dataVersion = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
    this.seenDataVersion = this.read();
  }

  /** Calls `onCommit` when another connection committed since the last look (wall time, not business time). */
  look(): void {
    const nowMs = this.wallMs();
    if (nowMs - this.readAtMs < 1) return;
    this.readAtMs = nowMs;
    const version = this.read();
    if (version !== this.seenDataVersion) {
      this.seenDataVersion = version;
      this.onCommit();
    }
  }

  private read(): number {
    return this.dataVersion.get()?.data_version ?? 0;
  }
}
