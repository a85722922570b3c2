/**
 * `bun run build`: the single-file `tollgate` executable for Linux x64 and arm64 (64-bit Raspberry
 * Pi OS), minified, with its source map embedded, into dist/, with dist/SHA256SUMS.
 *
 * Offline cross-compiling: `bun build --compile` would download the runtime of a foreign target.
 * Instead each target gets a runtime handed over explicitly (`executablePath`): x64 is the Bun
 * that runs this script; arm64 is the binary of the npm package `@oven/bun-linux-aarch64` of
 * exactly this Bun's version, fetched with `npm pack` (the ordinary npm client, integrity-checked)
 * and kept under node_modules/.cache. It is not a package.json dependency on purpose: every
 * `bun install` would fetch a second runtime (~30 MB) nobody runs, and a semver range there could
 * drift from the building Bun, which must match the runtime exactly.
 *
 * Files found through `new URL("./x", import.meta.url)` need care, since in the executable every
 * module's import.meta.url is the executable's own (`/$bunfs/root/<name>`). Worker threads
 * (`new Worker(new URL("./x.ts", import.meta.url))`) must be entry points of the bundle; they are
 * found in src/ and added, so a new worker needs no change here, and their URLs are rewritten to
 * where the executable stores them, their path relative to src/. Other files so referenced (the SQL
 * parser's WASM module) are embedded. `bun run` is unaffected by either.
 *
 * The web console (src/console) is bundled first, by the function `bun run` uses at its first
 * request, into a temporary directory; src/console/embedded.ts is then replaced by a module that
 * imports each output `with { type: "file" }`, so the executable carries the console and needs no
 * file beside it.
 *
 * A build is skipped when dist/ holds a binary built from the same inputs (sources, migrations,
 * lockfile, this script, Bun's version): the hash is kept in dist/.inputs-<target>. `--force`
 * rebuilds. Usage: bun run build.ts [--target x64|arm64|all] [--force] [--outdir <dir>]
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bundleConsole } from "./src/console/bundle.ts";

export const ROOT = import.meta.dir;
export const DIST = join(ROOT, "dist");

export type Target = "x64" | "arm64";
export const TARGETS: readonly Target[] = ["x64", "arm64"];

export const binaryPath = (target: Target, outDir = DIST) => join(outDir, `tollgate-linux-${target}`);
const inputsPath = (target: Target, outDir = DIST) => join(outDir, `.inputs-${target}`);

/** Every file that can change the binary, by path and content, plus Bun's version. */
export function inputsHash(): string {
  // The commit too: the binary reports it (tollgate_build_info), so a new commit is a new binary.
  const hash = createHash("sha256").update(`bun ${Bun.version}\ncommit ${gitCommit()}\n`);
  const files = [
    ...listFiles(join(ROOT, "src")),
    ...listFiles(join(ROOT, "migrations")),
    ...["package.json", "bun.lock", "build.ts", "tsconfig.json"].map((f) => join(ROOT, f)).filter(existsSync),
  ].sort();
  for (const file of files) hash.update(`${relative(ROOT, file)}\n`).update(readFileSync(file));
  return hash.digest("hex");
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Whether `outDir` holds a `target` binary built from the current inputs. */
export function isFresh(target: Target, hash = inputsHash(), outDir = DIST): boolean {
  const inputs = inputsPath(target, outDir);
  return existsSync(binaryPath(target, outDir)) && existsSync(inputs) && readFileSync(inputs, "utf8") === hash;
}

const SRC = join(ROOT, "src");
const WORKER_URL = /new Worker\([^;]*?new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url\s*\)/g;
const RELATIVE_URL = /new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url\s*\)/g;

/** Each source file of src/ that starts worker threads, with the absolute paths of their entry files. */
export function workerSpawners(): Map<string, string[]> {
  const spawners = new Map<string, string[]>();
  for (const file of listFiles(SRC).filter((f) => f.endsWith(".ts"))) {
    const entries = [...readFileSync(file, "utf8").matchAll(WORKER_URL)].map((m) => resolve(dirname(file), m[1]!));
    const missing = entries.find((entry) => !existsSync(entry));
    if (missing) throw new Error(`${relative(ROOT, file)} starts a worker from ${relative(ROOT, missing)}, which does not exist`);
    if (entries.length > 0) spawners.set(file, entries);
  }
  return spawners;
}

/**
 * The bundler plugin for `new URL("<relative path>", import.meta.url)`, which the executable cannot
 * resolve (see above): a worker's URL is rewritten to where the executable stores the worker, and
 * any other file so referenced (a dependency's WASM module) is embedded, its URL pointing at the
 * embedded copy. Only ES modules (.ts, .mjs) are rewritten; the rest load unchanged.
 */
function importMetaUrlPlugin(workers: ReadonlySet<string>): Bun.BunPlugin {
  return {
    name: "import-meta-url",
    setup(builder) {
      builder.onLoad({ filter: /\.(?:ts|mjs)$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        if (!source.includes("import.meta.url")) return undefined;
        const assets: string[] = [];
        const contents = source.replace(RELATIVE_URL, (whole, rel: string) => {
          const target = resolve(dirname(path), rel);
          if (workers.has(target)) return `new URL(${JSON.stringify(`./${relative(SRC, target)}`)}, import.meta.url)`;
          if (!existsSync(target) || /\.(?:[cm]?[jt]s)$/.test(target)) return whole;
          const name = `__embedded_${assets.length}`;
          assets.push(`import ${name} from ${JSON.stringify(rel)} with { type: "file" };`);
          return `Bun.pathToFileURL(${name})`;
        });
        if (contents === source) return undefined;
        return { contents: `${assets.join("\n")}\n${contents}`, loader: path.endsWith(".ts") ? "ts" : "js" };
      });
    },
  };
}

/** Bundles the console into `dir`; the plugin that makes src/console/embedded.ts embed those files. */
async function embeddedConsolePlugin(dir: string): Promise<Bun.BunPlugin> {
  const files = await bundleConsole();
  const entries: string[] = [];
  const imports = await Promise.all(files.map(async (file, i) => {
    const path = join(dir, file.name);
    await Bun.write(path, file.body);
    entries.push(`{ name: ${JSON.stringify(file.name)}, contentType: ${JSON.stringify(file.contentType)}, path: console_${i} }`);
    return `import console_${i} from ${JSON.stringify(path)} with { type: "file" };`;
  }));
  const contents = `${imports.join("\n")}\nexport const EMBEDDED_CONSOLE = [${entries.join(", ")}];\n`;
  const embedded = join(SRC, "console", "embedded.ts");
  return {
    name: "embedded-console",
    setup(builder) {
      builder.onLoad({ filter: /[\\/]console[\\/]embedded\.ts$/ }, ({ path }) => (path === embedded ? { contents, loader: "ts" } : undefined));
    },
  };
}

/** The Bun runtime to embed for `target`, without downloading through the compiler. */
async function runtimeFor(target: Target): Promise<string> {
  if (target === "x64") {
    if (process.arch !== "x64") throw new Error("building the x64 binary needs an x64 Bun (process.execPath is the embedded runtime)");
    return process.execPath;
  }
  return aarch64Runtime(Bun.version);
}

/** bin/bun of @oven/bun-linux-aarch64@`version`, fetched once with `npm pack` and cached. */
async function aarch64Runtime(version: string): Promise<string> {
  const cacheDir = join(ROOT, "node_modules", ".cache", "tollgate-build", `bun-linux-aarch64-${version}`);
  const bin = join(cacheDir, "package", "bin", "bun");
  if (existsSync(bin)) return bin;
  const work = mkdtempSync(join(tmpdir(), "tollgate-build-"));
  try {
    const spec = `@oven/bun-linux-aarch64@${version}`;
    await run(["npm", "pack", spec, "--pack-destination", work, "--silent"], ROOT, `npm pack ${spec} failed; is npm installed and the npm registry reachable?`);
    const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack ${spec} produced no tarball`);
    mkdirSync(cacheDir, { recursive: true });
    await run(["tar", "-xzf", join(work, tarball), "-C", cacheDir], ROOT, "could not unpack the arm64 runtime");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(bin)) throw new Error(`the package has no package/bin/bun: ${cacheDir}`);
  const packaged = JSON.parse(readFileSync(join(cacheDir, "package", "package.json"), "utf8")) as { version?: string };
  if (packaged.version !== version) throw new Error(`${cacheDir} holds version ${packaged.version}, not ${version}`);
  chmodSync(bin, 0o755);
  return bin;
}

async function run(cmd: string[], cwd: string, failure: string): Promise<void> {
  const proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`${failure}\n${cmd.join(" ")} exited ${code}: ${stderr.trim()}`);
}

/** ELF e_machine of a file: 62 is x86-64, 183 is AArch64. */
function elfMachine(file: string): number {
  const head = readFileSync(file).subarray(0, 20);
  if (head.toString("latin1", 1, 4) !== "ELF") throw new Error(`${file} is not an ELF executable`);
  return head.readUInt16LE(18);
}

/** The commit of the checkout being built (`-dirty` when it has changes), or `unknown` outside git. */
function gitCommit(): string {
  const head = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: ROOT });
  if (head.exitCode !== 0) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: ROOT }).stdout.toString().trim() !== "";
  return head.stdout.toString().trim() + (dirty ? "-dirty" : "");
}

/** Compiles one target into `outDir`; returns its path. */
export async function buildTarget(target: Target, outDir = DIST): Promise<string> {
  const outfile = binaryPath(target, outDir);
  const hash = inputsHash();
  const spawners = workerSpawners();
  const consoleDir = mkdtempSync(join(tmpdir(), "tollgate-console-"));
  try {
    return await compile(target, outfile, hash, spawners, await embeddedConsolePlugin(consoleDir));
  } finally {
    rmSync(consoleDir, { recursive: true, force: true });
  }
}

async function compile(target: Target, outfile: string, hash: string, spawners: Map<string, string[]>, consolePlugin: Bun.BunPlugin): Promise<string> {
  const result = await Bun.build({
    // main.ts sits in src/, the common root of every entry point: worker paths are relative to it.
    entrypoints: [join(SRC, "main.ts"), ...new Set([...spawners.values()].flat())],
    plugins: [importMetaUrlPlugin(new Set([...spawners.values()].flat())), consolePlugin],
    minify: true,
    // The commit, for tollgate_build_info (src/lib/build-info.ts).
    define: { TOLLGATE_BUILD_COMMIT: JSON.stringify(gitCommit()) },
    sourcemap: "linked",
    bytecode: true,
    format: "esm",
    compile: {
      target: target === "x64" ? "bun-linux-x64" : "bun-linux-arm64",
      executablePath: await runtimeFor(target),
      outfile,
      // The service reads only TOLLGATE_* from its real environment; a stray .env or bunfig.toml
      // in the working directory must not change it.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) throw new AggregateError(result.logs, `bun build failed for ${target}`);
  // The source maps are embedded in the executable (stack traces name src/ lines); the copies
  // written beside it, one per entry point, are redundant.
  for (const output of result.outputs) if (output.path.endsWith(".map")) rmSync(output.path, { force: true });
  const expected = target === "x64" ? 62 : 183;
  if (elfMachine(outfile) !== expected) throw new Error(`${outfile} was built for the wrong machine`);
  writeFileSync(inputsPath(target, dirname(outfile)), hash);
  return outfile;
}

/** `outDir`/SHA256SUMS for the binaries present, in `sha256sum -c` format. */
export function writeChecksums(outDir = DIST): void {
  const lines = TARGETS.map((t) => binaryPath(t, outDir)).filter(existsSync).map((file) => {
    const digest = createHash("sha256").update(readFileSync(file)).digest("hex");
    return `${digest}  ${relative(outDir, file)}`;
  });
  writeFileSync(join(outDir, "SHA256SUMS"), lines.join("\n") + "\n");
}

/** Builds the targets that are not fresh (all with `force`) into `outDir` and rewrites SHA256SUMS. */
export async function build(targets: readonly Target[], force = false, outDir = DIST): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const hash = inputsHash();
  for (const target of targets) {
    const name = binaryPath(target, outDir).replace(`${process.cwd()}/`, "");
    if (!force && isFresh(target, hash, outDir)) {
      console.log(`${name}: up to date`);
      continue;
    }
    const started = performance.now();
    const file = await buildTarget(target, outDir);
    const mib = (statSync(file).size / 1024 / 1024).toFixed(1);
    console.log(`${name}: ${mib} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  writeChecksums(outDir);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { target: { type: "string", default: "all" }, force: { type: "boolean", default: false }, outdir: { type: "string", default: DIST } },
  });
  const target = values.target;
  if (target !== "all" && target !== "x64" && target !== "arm64") throw new Error("--target must be x64, arm64 or all");
  await build(target === "all" ? TARGETS : [target], values.force, resolve(values.outdir));
}
