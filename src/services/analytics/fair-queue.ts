/**
 * Who runs next among the analytics queries of many workspaces. Each workspace has at most
 * `running` queries running and `running + waiting` in all; beyond that its new queries are
 * refused. A free query process goes to the waiting workspace with the fewest running queries,
 * then to the one whose last query started longest ago: a workspace that keeps the processes busy
 * is always served after one that does not, so its runaway queries delay another workspace's
 * query by at most one deadline. Pure bookkeeping, no processes or timers.
 */

export interface WorkspaceLimits {
  /** Queries of one workspace running at once. */
  running: number;
  /** Queries of one workspace waiting beyond those. */
  waiting: number;
}

interface Lane<T> {
  running: number;
  waiting: Array<{ item: T; seq: number }>;
  /** The sequence number of its last start; 0 before the first. */
  lastStart: number;
}

export class FairQueue<T> {
  /**
   * One small entry per workspace that has queried since the start: the count is bounded by the
   * workspaces, which only the operator creates, and forgetting when a workspace last ran would
   * put it first again.
   */
  private readonly lanes = new Map<string, Lane<T>>();
  private seq = 0;

  constructor(private readonly limits: WorkspaceLimits) {}

  /** Adds `item` to the workspace's waiting queries; false when the workspace has all it may have. */
  enqueue(workspaceId: string, item: T): boolean {
    const lane = this.lane(workspaceId);
    if (lane.running + lane.waiting.length >= this.limits.running + this.limits.waiting) return false;
    lane.waiting.push({ item, seq: ++this.seq });
    return true;
  }

  /** Takes the next query that may start now and counts it as running; undefined when none may. */
  start(): { workspaceId: string; item: T } | undefined {
    let best: [string, Lane<T>] | undefined;
    for (const entry of this.lanes) {
      if (this.startable(entry[1]) > 0 && (!best || before(entry[1], best[1]))) best = entry;
    }
    if (!best) return undefined;
    const [workspaceId, lane] = best;
    const { item } = lane.waiting.shift()!;
    lane.running += 1;
    lane.lastStart = ++this.seq;
    return { workspaceId, item };
  }

  /** A running query of the workspace ended (answered, stopped or failed). */
  finished(workspaceId: string): void {
    const lane = this.lanes.get(workspaceId);
    if (lane && lane.running > 0) lane.running -= 1;
  }

  /** Takes back a waiting query (given up on); false when it is not waiting. */
  withdraw(workspaceId: string, item: T): boolean {
    const lane = this.lanes.get(workspaceId);
    const index = lane?.waiting.findIndex((w) => w.item === item) ?? -1;
    if (index < 0) return false;
    lane!.waiting.splice(index, 1);
    return true;
  }

  /** Removes and returns every waiting query. */
  drain(): T[] {
    return [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0).map((w) => w.item));
  }

  /**
   * The queries that could start now if there were processes enough. A query, once among them,
   * stays among them until it starts or is withdrawn.
   */
  startableItems(): T[] {
    return [...this.lanes.values()].flatMap((lane) => lane.waiting.slice(0, this.startable(lane)).map((w) => w.item));
  }

  /** Queries waiting, in all workspaces. */
  waitingCount(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.waiting.length;
    return n;
  }

  private startable(lane: Lane<T>): number {
    return Math.max(0, Math.min(lane.waiting.length, this.limits.running - lane.running));
  }

  private lane(workspaceId: string): Lane<T> {
    let lane = this.lanes.get(workspaceId);
    if (!lane) this.lanes.set(workspaceId, (lane = { running: 0, waiting: [], lastStart: 0 }));
    return lane;
  }
}

/** Fewer running first, then the longer since its last start, then the query that came first. */
function before<T>(a: Lane<T>, b: Lane<T>): boolean {
  if (a.running !== b.running) return a.running < b.running;
  if (a.lastStart !== b.lastStart) return a.lastStart < b.lastStart;
  return a.waiting[0]!.seq < b.waiting[0]!.seq;
}
