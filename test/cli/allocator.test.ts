/**
 * `serve` re-executes itself once, in place, with the allocator setting of src/cli/allocator.ts:
 * the plan for every way tollgate is started, and the real `serve` (same PID, the variable in its
 * environment, a value the operator set kept as it is). Whether a command line is a `serve` is the
 * CLI's own reading of it (src/cli/command-line.ts). The executable: test/e2e/binary.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { allocatorReexec, SERVE_ALLOCATOR_ENV, type ProcessFacts } from "../../src/cli/allocator.ts";
import { parseCommandLine, type CommandLine } from "../../src/cli/command-line.ts";
import { environOf, SERVE_ALLOCATOR_ENTRIES, startServe, tempDataDir, type Served } from "../support/cli.ts";

const BUN = "/usr/bin/bun";
const SOURCES: ProcessFacts = { argv: [BUN, "/srv/tollgate/src/main.ts", "serve"], env: { PATH: "/usr/bin", TOLLGATE_PORT: "0" }, execPath: BUN, execArgv: [], main: "/srv/tollgate/src/main.ts" };
const EXECUTABLE: ProcessFacts = { argv: ["bun", "/$bunfs/root/tollgate", "serve"], env: { PATH: "/usr/bin" }, execPath: "/usr/local/bin/tollgate", execArgv: [], main: "/$bunfs/root/tollgate" };

describe("the plan", () => {
  test("the sources: the runtime with its flags, the script and the arguments again; the environment kept, the setting added", () => {
    const plan = allocatorReexec({ ...SOURCES, execArgv: ["--smol"] });
    expect(plan).toEqual({
      file: BUN,
      args: [BUN, "--smol", "/srv/tollgate/src/main.ts", "serve"],
      env: { PATH: "/usr/bin", TOLLGATE_PORT: "0", ...SERVE_ALLOCATOR_ENV },
    });
  });

  test("the executable: itself and the arguments (it starts its embedded entry on its own)", () => {
    expect(allocatorReexec(EXECUTABLE)).toEqual({ file: "/usr/local/bin/tollgate", args: ["/usr/local/bin/tollgate", "serve"], env: { PATH: "/usr/bin", ...SERVE_ALLOCATOR_ENV } });
  });

  test("no command is serve too", () => {
    expect(allocatorReexec({ ...EXECUTABLE, argv: EXECUTABLE.argv.slice(0, 2) })?.args).toEqual(["/usr/local/bin/tollgate"]);
  });

  test.each([
    ["another command", { argv: [BUN, "/srv/tollgate/src/main.ts", "migrate"] }],
    ["serve --help", { argv: [BUN, "/srv/tollgate/src/main.ts", "serve", "--help"] }],
    ["serve -h", { argv: [BUN, "/srv/tollgate/src/main.ts", "serve", "-h"] }],
    ["the variable already set (the re-executed process, or the operator's own value)", { env: { MIMALLOC_PURGE_DELAY: "10" } }],
    ["the variable set empty", { env: { MIMALLOC_PURGE_DELAY: "" } }],
  ])("nothing to do: %s", (_, change) => {
    expect(allocatorReexec({ ...SOURCES, ...change })).toBeUndefined();
  });
});

describe("a serve as the CLI reads the command line", () => {
  const planFor = (args: string[]) => allocatorReexec({ ...SOURCES, argv: [BUN, "/srv/tollgate/src/main.ts", ...args] });

  test.each<[string[], CommandLine]>([
    [[], { kind: "run", command: "serve", rest: [] }],
    [["serve"], { kind: "run", command: "serve", rest: [] }],
    [["serve", "extra"], { kind: "run", command: "serve", rest: ["extra"] }],
  ])("re-executed: %j (the CLI runs serve; with an argument it then refuses it, as before)", (args, line) => {
    expect(parseCommandLine(args)).toEqual(line);
    expect(planFor(args)?.args.slice(2)).toEqual(args);
  });

  test.each<[string[], CommandLine]>([
    [["help"], { kind: "usage" }],
    [["--help"], { kind: "usage" }],
    [["-h", "serve"], { kind: "usage" }],
    [["version"], { kind: "version" }],
    [["--version"], { kind: "version" }],
    [["serve", "extra", "--help"], { kind: "help", command: "serve" }],
    [["migrate", "-h"], { kind: "help", command: "migrate" }],
    [["backup", "serve"], { kind: "run", command: "backup", rest: ["serve"] }],
    [[""], { kind: "run", command: "", rest: [] }],
  ])("not re-executed: %j (the CLI does not run serve)", (args, line) => {
    expect(parseCommandLine(args)).toEqual(line);
    expect(planFor(args)).toBeUndefined();
  });
});

describe("the real serve", () => {
  let data: ReturnType<typeof tempDataDir> | undefined;
  let served: Served | undefined;
  afterEach(() => {
    served?.kill();
    data?.cleanup();
    served = data = undefined;
  });

  test("runs with the setting, in the process that was started, and still stops cleanly", async () => {
    data = tempDataDir();
    served = await startServe({ dataDir: data.dir });
    expect(environOf(served.pid)).toEqual(expect.arrayContaining([...SERVE_ALLOCATOR_ENTRIES]));
    expect((await fetch(`${served.url}/v2/liveness`)).status).toBe(200);
    expect(await served.stop()).toBe(0);
  });

  test("keeps a value the operator set", async () => {
    data = tempDataDir();
    served = await startServe({ dataDir: data.dir, env: { MIMALLOC_PURGE_DELAY: "10" } });
    const environ = environOf(served.pid);
    expect(environ).toContain("MIMALLOC_PURGE_DELAY=10");
    expect(environ).not.toContain("MIMALLOC_PURGE_DELAY=-1");
  });
});
