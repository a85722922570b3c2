/**
 * GET /v2/readiness: 200 while both databases take writes and carry this version's migrations,
 * 503 `not_ready` naming the failed check otherwise. The failures are made on the running
 * service's own connections (a read-only connection, a migration record removed or added), since
 * tests run as root, for whom a file's mode does not make it read-only. A cluster node has no
 * SQLite database: it checks PostgreSQL and Redis, whose outages test/cluster/outages.test.ts makes.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { testServer } from "../../support/route-contract.ts";
import { embeddedOnly } from "../../support/cluster-backend.ts";
import { expectError } from "../../support/contract.ts";

const NOT_READY = "service/application/not_ready";

const h = testServer();

async function readiness() {
  const res = await fetch(`${h.url}/v2/readiness`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Removes the newest migration record of `sqlite` while `fn` runs, then puts it back. */
async function withoutLatestMigration(sqlite: Database, fn: () => Promise<void>): Promise<void> {
  const row = sqlite.query<{ id: number; hash: string; created_at: number }, []>(`SELECT * FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`).get()!;
  sqlite.run(`DELETE FROM "__drizzle_migrations" WHERE id = ?`, [row.id]);
  try {
    await fn();
  } finally {
    sqlite.run(`INSERT INTO "__drizzle_migrations" (id, hash, created_at) VALUES (?, ?, ?)`, [row.id, row.hash, row.created_at]);
  }
}

/** Makes the service's connection `sqlite` read-only while `fn` runs. */
async function readOnlyDuring(sqlite: Database, fn: () => Promise<void>): Promise<void> {
  sqlite.run("PRAGMA query_only = ON");
  try {
    await fn();
  } finally {
    sqlite.run("PRAGMA query_only = OFF");
  }
}

describe("200", () => {
  test("ready: 200 without a root key", async () => {
    const res = await readiness();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data: { message: "ready" } });
  });

  embeddedOnly("checks tollgate.db, which a cluster node does not have")("another connection holding the write lock is no failure, and the probe does not wait for it", async () => {
    const other = new Database(h.embedded.storage.sqlite.filename);
    other.run("BEGIN IMMEDIATE");
    try {
      const startedMs = performance.now();
      expect((await readiness()).status).toBe(200);
      expect(performance.now() - startedMs).toBeLessThan(1000);
    } finally {
      other.run("ROLLBACK");
      other.close();
    }
  });

  test("the probe leaves nothing behind: writes still work", async () => {
    await readiness();
    expect((await h.post("/v2/apis.createApi", { name: "after-readiness" })).status).toBe(200);
  });

  embeddedOnly("looks at the SQLite connections, which a cluster node does not have")("the probe leaves no transaction open", async () => {
    await readiness();
    expect(h.embedded.storage.sqlite.inTransaction).toBe(false);
    expect(h.embedded.analytics.sqlite.inTransaction).toBe(false);
  });
});

describe("503", () => {
  embeddedOnly("checks tollgate.db, which a cluster node does not have")("503: tollgate.db takes no writes", async () => {
    await readOnlyDuring(h.embedded.storage.sqlite, async () => {
      const res = await readiness();
      expectError(h, res, 503, NOT_READY);
      expect(res.body.error.detail).toStartWith("tollgate.db is not writable: ");
      expect(res.body.error.detail).not.toContain("analytics.db");
    });
    expect((await readiness()).status).toBe(200);
  });

  embeddedOnly("checks analytics.db, which a cluster node does not have")("503: analytics.db takes no writes", async () => {
    await readOnlyDuring(h.embedded.analytics.sqlite, async () => {
      const res = await readiness();
      expectError(h, res, 503, NOT_READY);
      expect(res.body.error.detail).toStartWith("analytics.db is not writable: ");
    });
  });

  embeddedOnly("checks analytics.db, which a cluster node does not have")("503: analytics.db lacks a migration of this version", async () => {
    await withoutLatestMigration(h.embedded.analytics.sqlite, async () => {
      const res = await readiness();
      expectError(h, res, 503, NOT_READY, "analytics.db lacks migrations of this version: restart tollgate, which applies them.");
    });
    expect((await readiness()).status).toBe(200);
  });

  embeddedOnly("checks tollgate.db, which a cluster node does not have")("503: tollgate.db lacks a migration, and each failed check is named", async () => {
    await readOnlyDuring(h.embedded.analytics.sqlite, () => withoutLatestMigration(h.embedded.storage.sqlite, async () => {
      const res = await readiness();
      expectError(h, res, 503, NOT_READY);
      expect(res.body.error.detail).toContain("tollgate.db lacks migrations of this version");
      expect(res.body.error.detail).toContain("analytics.db is not writable");
    }));
  });

  embeddedOnly("checks tollgate.db, which a cluster node does not have")("503: tollgate.db has a migration of a newer version", async () => {
    const sqlite = h.embedded.storage.sqlite;
    sqlite.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES ('newer', 99999999999999)`);
    try {
      expectError(h, await readiness(), 503, NOT_READY, "tollgate.db has migrations of a newer tollgate version: run that version.");
    } finally {
      sqlite.run(`DELETE FROM "__drizzle_migrations" WHERE hash = 'newer'`);
    }
  });
});

describe("405", () => {
  test("405: POST /v2/readiness answers with Allow", async () => {
    const res = await h.post("/v2/readiness", {});
    expectError(h, res, 405, "user/method_not_allowed/method_not_allowed");
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });
});
