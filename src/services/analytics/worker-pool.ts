/**
 * The main thread's side of analytics queries: one worker thread (started on first use) runs them
 * one at a time, so a slow query costs at most one core and never the event loop that answers
 * keys.verifyKey. A query past its time limit is answered with 422 at once and its worker is
 * terminated and replaced. A terminated worker is "stopping" until its thread has really ended;
 * while too many are, new queries get 503 rather than piling up threads.
 */
import { AppError } from "../../errors/app-error.ts";
import type { ErrorCode } from "../../errors/catalogue.ts";
import type { Confinement } from "./query/compile.ts";
import { timeoutError, type Row } from "./execute.ts";
import type { FromWorker, QueryMessage } from "./protocol.ts";

export interface WorkerPoolOptions {
  dbPath: string;
  /** Time limit of one query, waiting included, in ms. */
  timeoutMs: number;
  maxRows: number;
  maxBytes: number;
  /** Queries waiting for the worker beyond which new ones get 429. */
  maxQueued?: number;
  /** Terminated workers still running beyond which new queries get 503. */
  maxStopping?: number;
  /** The worker script; tests substitute their own. */
  workerUrl?: URL;
}

export interface QueryRequest {
  sql: string;
  confinement: Confinement;
  nowMs: number;
}

interface Pending {
  id: number;
  request: QueryRequest;
  deadlineMs: number;
  timer: ReturnType<typeof setTimeout>;
  resolve(rows: Row[]): void;
  reject(error: Error): void;
}

export class AnalyticsWorkerPool {
  private worker: Worker | undefined;
  private ready = false;
  private stopped = false;
  private readonly queue: Pending[] = [];
  private running: Pending | undefined;
  private stopping = 0;
  private nextId = 0;

  constructor(private readonly opts: WorkerPoolOptions) {}

  /** Runs one query; rejects with AppError (400/422/429/503). */
  run(request: QueryRequest): Promise<Row[]> {
    if (this.stopped) return Promise.reject(new AppError("service_unavailable", { detail: "The service is shutting down." }));
    if (this.stopping >= (this.opts.maxStopping ?? 2)) {
      return Promise.reject(new AppError("analytics_connection_failed", { detail: "Analytics is stopping queries that ran past the time limit; try again in a moment." }));
    }
    if (this.queue.length >= (this.opts.maxQueued ?? 16)) {
      return Promise.reject(new AppError("query_quota_exceeded", { detail: "Too many analytics queries are waiting; try again in a moment." }));
    }
    return new Promise<Row[]>((resolve, reject) => {
      const pending: Pending = {
        id: ++this.nextId, request, deadlineMs: Date.now() + this.opts.timeoutMs, resolve, reject,
        timer: setTimeout(() => this.timedOut(pending), this.opts.timeoutMs),
      };
      this.queue.push(pending);
      this.pump();
    });
  }

  /** For tests and metrics: what the pool is doing. */
  stats(): { workerStarted: boolean; running: boolean; queued: number; stopping: number } {
    return { workerStarted: this.worker !== undefined, running: this.running !== undefined, queued: this.queue.length, stopping: this.stopping };
  }

  /** Terminates the worker and fails whatever is still waiting. */
  stop(): void {
    this.stopped = true;
    const error = new AppError("service_unavailable", { detail: "The service is shutting down." });
    for (const pending of [...this.queue, ...(this.running ? [this.running] : [])]) this.settle(pending, error);
    this.queue.length = 0;
    this.running = undefined;
    this.worker?.terminate();
    this.worker = undefined;
  }

  private pump(): void {
    if (this.running || this.queue.length === 0 || this.stopped) return;
    const worker = this.ensureWorker();
    if (!this.ready) return;
    const pending = this.queue.shift()!;
    this.running = pending;
    const message: QueryMessage = {
      type: "query", id: pending.id, ...pending.request, deadlineMs: pending.deadlineMs,
      timeoutMs: this.opts.timeoutMs, maxRows: this.opts.maxRows, maxBytes: this.opts.maxBytes,
    };
    worker.postMessage(message);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.opts.workerUrl ?? new URL("./worker.ts", import.meta.url));
    // An idle analytics worker must not keep the process alive.
    worker.unref();
    worker.onmessage = (event: MessageEvent<FromWorker>) => this.received(worker, event.data);
    worker.onerror = (event) => this.crashed(worker, event.message);
    this.worker = worker;
    this.ready = false;
    worker.postMessage({ type: "init", dbPath: this.opts.dbPath });
    return worker;
  }

  private received(worker: Worker, message: FromWorker): void {
    if (worker !== this.worker) return;
    switch (message.type) {
      case "ready":
        this.ready = true;
        break;
      case "failed":
        this.crashed(worker, message.detail);
        return;
      case "rows":
      case "error": {
        const pending = this.running;
        if (!pending || pending.id !== message.id) return;
        this.running = undefined;
        if (message.type === "rows") this.settle(pending, message.rows);
        else this.settle(pending, workerError(message.code, message.detail));
        if (message.type === "error" && (message.broken || message.code === "query_execution_timeout")) this.replace();
        break;
      }
    }
    this.pump();
  }

  private timedOut(pending: Pending): void {
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) this.queue.splice(queued, 1);
    this.settle(pending, timeoutError(this.opts.timeoutMs));
    if (this.running === pending) {
      this.running = undefined;
      this.replace();
    }
    this.pump();
  }

  /** The worker died or could not start: fail the query it ran (or all, if it never started). */
  private crashed(worker: Worker, detail: string): void {
    if (worker !== this.worker) return;
    const victims = this.ready ? (this.running ? [this.running] : []) : [...this.queue];
    if (!this.ready) this.queue.length = 0;
    this.running = undefined;
    for (const pending of victims) {
      this.settle(pending, new AppError("analytics_connection_failed", { detail: "The analytics worker failed; try again.", cause: new Error(detail) }));
    }
    this.replace();
    this.pump();
  }

  /** Terminates the current worker; the next query starts a fresh one. */
  private replace(): void {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    this.ready = false;
    this.stopping += 1;
    worker.addEventListener("close", () => { this.stopping -= 1; }, { once: true });
    worker.terminate();
  }

  private settle(pending: Pending, outcome: Row[] | Error): void {
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }
}

function workerError(code: ErrorCode, detail: string): AppError {
  // An unexpected error's message is for the log, not for the caller.
  if (code === "unexpected_error") return new AppError("unexpected_error", { detail: "The analytics query failed unexpectedly.", cause: new Error(detail) });
  return new AppError(code, { detail });
}
