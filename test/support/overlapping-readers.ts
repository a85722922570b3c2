/**
 * A worker thread that keeps the WAL read from without a gap, as a busy service does: two
 * connections take turns, each opening its read transaction before the other closes its own, and
 * doing some work inside it. Start it with `{ path, stop }` (`stop`: an Int32Array over a
 * SharedArrayBuffer; set its element 0 to 1 to stop). It posts "reading" once the first read
 * transaction is open and "stopped" once both connections are closed.
 */
import { Database } from "bun:sqlite";

declare var self: Worker;

/** CPU work inside a read transaction, so that the two overlap for a while. */
const WORK = "WITH RECURSIVE c(x) AS (VALUES(1) UNION ALL SELECT x + 1 FROM c WHERE x < 5000) SELECT sum(x) AS s FROM c";

self.onmessage = (event: MessageEvent<{ path: string; stop: Int32Array }>) => {
  const { path, stop } = event.data;
  const readers = [new Database(path, { readonly: true }), new Database(path, { readonly: true })];
  const begin = (db: Database) => {
    db.run("BEGIN");
    // The first read takes the snapshot (and the WAL read lock) that the transaction keeps.
    db.query("SELECT max(rowid) AS n FROM probe").get();
  };
  begin(readers[0]!);
  postMessage("reading");
  for (let turn = 0; Atomics.load(stop, 0) === 0; turn++) {
    const current = readers[turn % 2]!;
    const next = readers[(turn + 1) % 2]!;
    current.query(WORK).get();
    begin(next);
    current.run("COMMIT");
  }
  for (const db of readers) {
    if (db.inTransaction) db.run("COMMIT");
    db.close();
  }
  postMessage("stopped");
};
