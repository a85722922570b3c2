/** loadConfig() refuses bad values: each variable named in the ConfigError's problems, secrets never echoed. */
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config.ts";

/** The ConfigError that `env` produces (fails the test when there is none). */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

const MASTER_KEY_32 = Buffer.alloc(32, 7).toString("base64");

describe("each bad value is named in the problems", () => {
  const cases: Array<[string, string]> = [
    ["TOLLGATE_PORT", "http"],
    ["TOLLGATE_PORT", "-1"],
    ["TOLLGATE_PORT", "65536"],
    ["TOLLGATE_PORT", "80.5"],
    ["TOLLGATE_ROOT_KEY", "short"],
    ["TOLLGATE_ROOT_KEY", "has white space in it, sadly"],
    ["TOLLGATE_ROOT_KEY", "513 characters".padEnd(513, "x")],
    ["TOLLGATE_MASTER_KEY", "not base64 at all!"],
    ["TOLLGATE_DOCS_URL", "not a url"],
    ["TOLLGATE_DOCS_URL", "ftp://docs.example.com"],
    ["TOLLGATE_LOG_LEVEL", "verbose"],
    ["TOLLGATE_LOG_LEVEL", "INFO"],
    ["TOLLGATE_LOG_FORMAT", "logfmt"],
    ["TOLLGATE_LOG_FORMAT", "JSON"],
    ["TOLLGATE_RATELIMIT_FLUSH_MS", "10"],
    ["TOLLGATE_RATELIMIT_FLUSH_MS", "1s"],
    ["TOLLGATE_RATELIMIT_MEMORY_MB", "0"],
    ["TOLLGATE_RATELIMIT_MEMORY_MB", "1GB"],
    ["TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB", "0"],
    ["TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB", "129"],
    ["TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB", "0"],
    ["TOLLGATE_RATELIMIT_NAMESPACE_CACHE_WORKSPACE_MB", "0"],
    ["TOLLGATE_RATELIMIT_NAMESPACE_CACHE_WORKSPACE_MB", "33"],
    ["TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES", "10001"],
    ["TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES", "-1"],
    ["TOLLGATE_AUDIT_RETENTION_DAYS", "0"],
    ["TOLLGATE_AUDIT_RETENTION_DAYS", "36501"],
    ["TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS", "99"],
    ["TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS", "5s"],
    ["TOLLGATE_ANALYTICS_QUERY_PROCESSES", "0"],
    ["TOLLGATE_ANALYTICS_QUERY_PROCESSES", "65"],
    ["TOLLGATE_ANALYTICS_QUERIES_PER_WORKSPACE", "0"],
    ["TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE", "1001"],
    ["TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE", "two"],
    ["TOLLGATE_ANALYTICS", "no"],
    ["TOLLGATE_ANALYTICS", "OFF"],
    ["TOLLGATE_V1_PATHS", "yes"],
    ["TOLLGATE_ANALYTICS_FLUSH_MS", "10"],
    ["TOLLGATE_ANALYTICS_RAW_RETENTION_DAYS", "0"],
    ["TOLLGATE_ANALYTICS_MINUTE_RETENTION_DAYS", "x"],
    ["TOLLGATE_ANALYTICS_HOUR_RETENTION_DAYS", "36501"],
    ["TOLLGATE_ANALYTICS_DAY_RETENTION_DAYS", "-1"],
    ["TOLLGATE_ANALYTICS_MONTH_RETENTION_DAYS", "0"],
    ["TOLLGATE_KEY_CACHE_SIZE", "-5"],
    ["TOLLGATE_KEY_CACHE_SIZE", "10000001"],
    ["TOLLGATE_KEY_CACHE_MB", "0"],
    ["TOLLGATE_KEY_SLICED_LOADS", "0"],
    ["TOLLGATE_KEY_SLICED_LOADS", "65"],
    ["TOLLGATE_KEY_CACHE_MB", "1048577"],
    ["TOLLGATE_KEY_CACHE_MB", "64M"],
    ["TOLLGATE_SHUTDOWN_TIMEOUT_MS", "600001"],
    ["TOLLGATE_SHUTDOWN_TIMEOUT_MS", "soon"],
    ["TOLLGATE_METRICS_ALLOW", "localhost"],
    ["TOLLGATE_METRICS_ALLOW", "127.0.0.1/33"],
    ["TOLLGATE_METRICS_ALLOW", "::1,10.0.0.0/8/1"],
    ["TOLLGATE_METRICS_MAX_APIS", "100001"],
    ["TOLLGATE_METRICS_MAX_APIS", "-1"],
    ["TOLLGATE_TRUSTED_PROXIES", "proxy.internal"],
    ["TOLLGATE_IDLE_TIMEOUT_SECONDS", "0"],
    ["TOLLGATE_IDLE_TIMEOUT_SECONDS", "256"],
    ["TOLLGATE_BODY_TIMEOUT_MS", "99"],
    ["TOLLGATE_BODY_TIMEOUT_MS", "10s"],
    ["TOLLGATE_MAX_REQUESTS_IN_FLIGHT", "0"],
    ["TOLLGATE_MAX_REQUESTS_IN_FLIGHT", "1000001"],
    ["TOLLGATE_BODY_BUFFER_MIB", "9"],
    ["TOLLGATE_BODY_BUFFER_MIB", "64M"],
  ];
  test.each(cases.map(([name, value]) => [name, value.length > 40 ? `${value.slice(0, 14)}…` : value, value]))("%s=%s", (name, _, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
  });

  test("the message of the error lists the problem too", () => {
    expect(() => loadConfig({ TOLLGATE_PORT: "http" })).toThrow(/TOLLGATE_PORT/);
  });
});

describe("TOLLGATE_MASTER_KEY must be base64 of exactly 32 bytes", () => {
  test.each([
    ["31 bytes", Buffer.alloc(31, 1).toString("base64")],
    ["33 bytes", Buffer.alloc(33, 1).toString("base64")],
    ["64 hex characters (32 bytes as hex)", Buffer.alloc(32, 1).toString("hex")],
    ["base64url alphabet", Buffer.alloc(32, 0xfb).toString("base64url")],
    ["padding in the middle", "AAAA=AAA" + "A".repeat(36)],
  ])("rejects %s", (_, value) => {
    expect(problemsOf({ TOLLGATE_MASTER_KEY: value })).toEqual([expect.stringContaining("TOLLGATE_MASTER_KEY")]);
  });

  test("the problems do not echo secret values (master key, root key)", () => {
    const master = Buffer.alloc(31, 9).toString("base64");
    const root = "secret with spaces";
    const problems = problemsOf({ TOLLGATE_MASTER_KEY: master, TOLLGATE_ROOT_KEY: root });
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).not.toContain(master);
    expect(problems.join("\n")).not.toContain(root);
  });

  test("surrounding white space (a trailing newline from a file) is tolerated", () => {
    expect(loadConfig({ TOLLGATE_MASTER_KEY: `${MASTER_KEY_32}\n` }).masterKey).toEqual(new Uint8Array(Buffer.alloc(32, 7)));
  });
});

describe("the cluster mode's servers", () => {
  test("the cluster mode without TOLLGATE_MASTER_KEY is a problem: every node must decrypt what another encrypted", () => {
    expect(problemsOf({ TOLLGATE_DATABASE_URL: "postgres://localhost/tg", TOLLGATE_REDIS_URL: "redis://localhost" }))
      .toEqual([expect.stringContaining("TOLLGATE_MASTER_KEY")]);
  });

  test("one server without the other is a problem naming the missing one", () => {
    expect(problemsOf({ TOLLGATE_DATABASE_URL: "postgres://localhost/tg" })).toEqual([expect.stringContaining("TOLLGATE_REDIS_URL")]);
    expect(problemsOf({ TOLLGATE_REDIS_URL: "redis://localhost" })).toEqual([expect.stringContaining("TOLLGATE_DATABASE_URL")]);
  });

  test.each([
    ["TOLLGATE_DATABASE_URL", "mysql://u:hunter2@localhost/tg"],
    ["TOLLGATE_DATABASE_URL", "localhost:5432"],
    ["TOLLGATE_REDIS_URL", "http://u:hunter2@localhost:6379"],
    ["TOLLGATE_REDIS_URL", "redis://"],
  ])("%s=%s is refused without echoing the URL (it may hold a password)", (name, value) => {
    const other: Record<string, string> = name === "TOLLGATE_DATABASE_URL" ? { TOLLGATE_REDIS_URL: "redis://localhost" } : { TOLLGATE_DATABASE_URL: "postgres://localhost/tg" };
    const problems = problemsOf({ ...other, [name]: value, TOLLGATE_MASTER_KEY: MASTER_KEY_32 });
    expect(problems).toEqual([expect.stringContaining(name)]);
    expect(problems.join("\n")).not.toContain("hunter2");
    expect(problems.join("\n")).not.toContain("localhost");
  });

  test.each([
    ["TOLLGATE_DATABASE_POOL", "0"],
    ["TOLLGATE_REDIS_UNREACHABLE", "maybe"],
    ["TOLLGATE_CLUSTER_CHANGE_POLL_MS", "5"],
    ["TOLLGATE_DATABASE_TIMEOUT_MS", "50"],
  ])("rejects %s=%s", (name, value) => {
    expect(problemsOf({ TOLLGATE_DATABASE_URL: "postgres://localhost/tg", TOLLGATE_REDIS_URL: "redis://localhost", TOLLGATE_MASTER_KEY: MASTER_KEY_32, [name]: value }))
      .toEqual([expect.stringContaining(name)]);
  });
});

describe("several problems at once", () => {
  test("every bad variable is reported in one ConfigError, in a stable order", () => {
    const problems = problemsOf({
      TOLLGATE_PORT: "eighty",
      TOLLGATE_ROOT_KEY: "short",
      TOLLGATE_MASTER_KEY: "abc",
      TOLLGATE_DOCS_URL: "nope",
      TOLLGATE_LOG_LEVEL: "loud",
      TOLLGATE_RATELIMIT_FLUSH_MS: "1",
      TOLLGATE_AUDIT_RETENTION_DAYS: "0",
      TOLLGATE_KEY_CACHE_SIZE: "many",
      TOLLGATE_SHUTDOWN_TIMEOUT_MS: "-1",
    });
    expect(problems).toHaveLength(9);
    const names = ["TOLLGATE_PORT", "TOLLGATE_ROOT_KEY", "TOLLGATE_MASTER_KEY", "TOLLGATE_DOCS_URL", "TOLLGATE_LOG_LEVEL",
      "TOLLGATE_RATELIMIT_FLUSH_MS", "TOLLGATE_AUDIT_RETENTION_DAYS", "TOLLGATE_KEY_CACHE_SIZE", "TOLLGATE_SHUTDOWN_TIMEOUT_MS"];
    names.forEach((name, i) => expect(problems[i]).toContain(name));
  });

  test("good variables next to bad ones are not reported", () => {
    const problems = problemsOf({ TOLLGATE_PORT: "0", TOLLGATE_LOG_LEVEL: "warn", TOLLGATE_MASTER_KEY: "abc", TOLLGATE_KEY_CACHE_SIZE: "x" });
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).not.toContain("TOLLGATE_PORT");
    expect(problems.join("\n")).not.toContain("TOLLGATE_LOG_LEVEL");
  });
});
