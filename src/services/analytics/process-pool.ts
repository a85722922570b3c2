/**
 * The `serve` side of analytics queries: at most `processes` query processes (query-process.ts),
 * shared by every workspace through a fair queue (fair-queue.ts). A query waits for its
 * workspace's earlier queries (as many as its share allows), then for a place: a free process, or
 * room for one more, which is then started for it. That second wait is bounded by two deadlines,
 * 429 past them; with the fair queue, a workspace that runs nothing gets the first place freed,
 * within one deadline even when other workspaces' runaways hold every process. Its deadline starts
 * when the process takes it (a fresh process starts first). At the deadline the process is killed
 * with SIGKILL, so its CPU use stops at once whatever SQLite is doing, and the query is answered
 * 422 at once; its place goes to the next query, with a fresh process.
 */
import type { Subprocess } from "bun";
import { AppError } from "../../errors/app-error.ts";
import type { ErrorCode } from "../../errors/catalogue.ts";
import type { Confinement } from "./query/compile.ts";
import { timeoutError, type Row } from "./execute.ts";
import { FairQueue, type WorkspaceLimits } from "./fair-queue.ts";
import type { AnalyticsDatabase, FromQueryProcess, ToQueryProcess } from "./protocol.ts";

/** Which database the processes query (analytics.db, or on a cluster node PostgreSQL), and how. */
export type ProcessPoolOptions = AnalyticsDatabase & {
  /** The argv that starts a query process (`tollgate analytics-query-process`); tests substitute their own. */
  command: readonly string[];
  /** Time limit of one query from when a process takes it, in ms. */
  timeoutMs: number;
  maxRows: number;
  maxBytes: number;
  /** Query processes at most, shared by every workspace. */
  processes: number;
  perWorkspace: WorkspaceLimits;
};

export interface QueryRequest {
  sql: string;
  confinement: Confinement;
  nowMs: number;
}

interface Pending {
  id: number;
  workspaceId: string;
  request: QueryRequest;
  started: boolean;
  waitTimer: ReturnType<typeof setTimeout> | undefined;
  resolve(rows: Row[]): void;
  reject(error: Error): void;
}

interface QueryProcess {
  proc: Subprocess<"pipe", "ignore", "inherit">;
  ready: boolean;
  /** The query it runs or, before it is ready, the query it was started for. */
  job: Pending | undefined;
  /** Before it is ready: the start-up limit; while it runs a query: the deadline; when idle: the idle limit. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** A process not ready by then is killed and its query fails: room for a slow start on a small machine. */
const START_TIMEOUT_MS = 10_000;
/** An idle process ends after this, so that its memory goes back to the system until queries come again. */
const IDLE_TIMEOUT_MS = 60_000;

export class AnalyticsProcessPool {
  private readonly processes: QueryProcess[] = [];
  private readonly queue: FairQueue<Pending>;
  private stopped = false;
  private nextId = 0;

  constructor(private readonly opts: ProcessPoolOptions) {
    this.queue = new FairQueue(opts.perWorkspace);
  }

  /** Runs one query; rejects with AppError (400/422 from the query, 429 over the workspace's share, 503). */
  run(request: QueryRequest): Promise<Row[]> {
    if (this.stopped) return Promise.reject(shuttingDown());
    return new Promise<Row[]>((resolve, reject) => {
      const workspaceId = request.confinement.workspaceId;
      const pending: Pending = { id: ++this.nextId, workspaceId, request, started: false, waitTimer: undefined, resolve, reject };
      if (!this.queue.enqueue(workspaceId, pending)) {
        const { running, waiting } = this.opts.perWorkspace;
        reject(this.busy(`The workspace already has ${running + waiting} analytics queries running or waiting (at most ${running} run at once); try again when one has answered.`));
        return;
      }
      this.pump();
    });
  }

  /** For tests and benchmarks: the processes (and their PIDs) and the queries. */
  stats(): { pids: number[]; ready: number; running: number; waiting: number } {
    return {
      pids: this.processes.map((p) => p.proc.pid),
      ready: this.processes.filter((p) => p.ready).length,
      running: this.processes.filter((p) => p.job).length,
      waiting: this.queue.waitingCount(),
    };
  }

  /** Kills every process and fails what is running or waiting with 500 `service_unavailable`. */
  stop(): void {
    this.stopped = true;
    const error = shuttingDown();
    for (const pending of this.queue.drain()) this.settle(pending, error);
    for (const child of [...this.processes]) {
      const job = child.job;
      this.discard(child);
      if (job) this.settle(job, error);
    }
  }

  /**
   * Hands waiting queries to idle processes, and starts a process for each that finds none while
   * there is room; then times the wait of every query left that only a process keeps waiting.
   */
  private pump(): void {
    while (!this.stopped) {
      const idle = this.processes.find((p) => p.ready && !p.job);
      if (!idle && this.processes.length >= this.opts.processes) break;
      const next = this.queue.start();
      if (!next) break;
      clearTimeout(next.item.waitTimer);
      next.item.started = true;
      if (idle) this.dispatch(idle, next.item);
      else this.spawn(next.item);
    }
    for (const pending of this.queue.startableItems()) {
      pending.waitTimer ??= setTimeout(() => this.waitedTooLong(pending), this.waitLimitMs());
    }
  }

  private dispatch(child: QueryProcess, pending: Pending): void {
    clearTimeout(child.timer);
    child.job = pending;
    const { timeoutMs, maxRows, maxBytes } = this.opts;
    child.timer = setTimeout(() => this.deadlinePassed(child), timeoutMs);
    const message: ToQueryProcess = { type: "query", id: pending.id, ...pending.request, deadlineMs: Date.now() + timeoutMs, timeoutMs, maxRows, maxBytes };
    try {
      child.proc.send(message);
    } catch (error) {
      // The channel closed under it (the process just died); not from inside pump's loop.
      queueMicrotask(() => this.lost(child, error));
    }
  }

  /** Starts a query process for `pending`, which it runs once it is ready. */
  private spawn(pending: Pending): void {
    let child: QueryProcess | undefined;
    try {
      const proc = Bun.spawn([...this.opts.command], {
        // stdin is the process's lifeline (lifeline.ts): never written, closed by the kernel when `serve` ends.
        stdin: "pipe", stdout: "ignore", stderr: "inherit",
        // It needs nothing from the environment, and what parses callers' SQL should not hold
        // TOLLGATE_MASTER_KEY or TOLLGATE_ROOT_KEY. (PostgreSQL's URL comes in the init message.)
        env: {},
        ipc: (message: FromQueryProcess) => { if (child) this.received(child, message); },
        onExit: () => { if (child) this.exited(child); },
      });
      // A query process must not keep `serve` (or a test) alive.
      proc.unref();
      child = { proc, ready: false, job: pending, timer: undefined };
    } catch (error) {
      this.settle(pending, cannotStart(error));
      return;
    }
    const started = child;
    this.processes.push(started);
    started.timer = setTimeout(() => this.startFailed(started, `not ready within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const { opts } = this;
    started.proc.send((opts.postgresUrl !== undefined ? { type: "init", postgresUrl: opts.postgresUrl } : { type: "init", dbPath: opts.dbPath }) satisfies ToQueryProcess);
  }

  private received(child: QueryProcess, message: FromQueryProcess): void {
    if (!this.processes.includes(child)) return;
    switch (message.type) {
      case "ready": {
        child.ready = true;
        const job = child.job;
        if (job) this.dispatch(child, job);
        else this.idle(child);
        break;
      }
      case "failed":
        this.startFailed(child, message.detail);
        return;
      case "rows":
      case "error": {
        const job = child.job;
        if (!child.ready || !job || job.id !== message.id) return;
        child.job = undefined;
        this.settle(job, message.type === "rows" ? message.rows : processError(message.code, message.detail));
        if (message.type === "error" && message.broken) this.discard(child);
        else this.idle(child);
        break;
      }
    }
    this.pump();
  }

  private deadlinePassed(child: QueryProcess): void {
    const job = child.job;
    this.discard(child);
    if (job) this.settle(job, timeoutError(this.opts.timeoutMs));
    this.pump();
  }

  /** The process ended by itself (it crashed, or something else killed it). */
  private exited(child: QueryProcess): void {
    if (!this.processes.includes(child)) return;
    if (!child.ready) {
      this.startFailed(child, "exited while starting");
      return;
    }
    this.lost(child, new Error("the analytics query process exited"));
  }

  /** The process can no longer be used: its query alone fails with 503. */
  private lost(child: QueryProcess, cause: unknown): void {
    const job = child.job;
    this.discard(child);
    if (job) this.settle(job, new AppError("analytics_connection_failed", { detail: "The analytics query process failed; try again.", cause }));
    this.pump();
  }

  /** The process never became ready: the query it was started for fails with 503. */
  private startFailed(child: QueryProcess, detail: string): void {
    const job = child.job;
    this.discard(child);
    if (job) this.settle(job, cannotStart(new Error(detail)));
    this.pump();
  }

  private idle(child: QueryProcess): void {
    clearTimeout(child.timer);
    child.timer = setTimeout(() => { if (!child.job) this.discard(child); }, IDLE_TIMEOUT_MS);
    child.timer.unref();
  }

  /** Forgets the process and kills it: its messages and its exit no longer count. */
  private discard(child: QueryProcess): void {
    const index = this.processes.indexOf(child);
    if (index >= 0) this.processes.splice(index, 1);
    clearTimeout(child.timer);
    child.job = undefined;
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
  }

  private waitedTooLong(pending: Pending): void {
    if (!this.queue.withdraw(pending.workspaceId, pending)) return;
    this.settle(pending, this.busy(`The analytics query waited ${this.waitLimitMs()} ms for a free query process; try again later.`));
    // The queries behind it in its workspace move up: time their wait.
    this.pump();
  }

  private settle(pending: Pending, outcome: Row[] | Error): void {
    clearTimeout(pending.waitTimer);
    if (pending.started) this.queue.finished(pending.workspaceId);
    pending.started = false;
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  private busy(detail: string): AppError {
    return new AppError("query_quota_exceeded", { detail, retryAfterS: this.retryAfterS() });
  }

  private waitLimitMs(): number {
    return 2 * this.opts.timeoutMs;
  }

  /** A running query ends within one deadline, so a retry after one has a place. */
  private retryAfterS(): number {
    return Math.max(1, Math.ceil(this.opts.timeoutMs / 1000));
  }
}

function cannotStart(cause: unknown): AppError {
  return new AppError("analytics_connection_failed", { detail: "The analytics query process could not start; try again later.", cause });
}

function shuttingDown(): AppError {
  return new AppError("service_unavailable", { detail: "The service is shutting down." });
}

function processError(code: ErrorCode, detail: string): AppError {
  // An unexpected error's message is for the log, not for the caller.
  if (code === "unexpected_error") return new AppError("unexpected_error", { detail: "The analytics query failed unexpectedly.", cause: new Error(detail) });
  return new AppError(code, { detail });
}
