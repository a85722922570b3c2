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
 * A build is skipped when dist/ holds a binary built from the same inputs (sources, migrations,
 * lockfile, this script, Bun's version): the hash is kept in dist/.inputs-<target>. `--force`
 * rebuilds. Usage: bun run build.ts [--target x64|arm64|all] [--force]
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";

export const ROOT = import.meta.dir;
export const DIST = join(ROOT, "dist");

export type Target = "x64" | "arm64";
export const TARGETS: readonly Target[] = ["x64", "arm64"];

export const binaryPath = (target: Target) => join(DIST, `tollgate-linux-${target}`);
const inputsPath = (target: Target) => join(DIST, `.inputs-${target}`);

/** Every file that can change the binary, by path and content, plus Bun's version. */
export function inputsHash(): string {
  const hash = createHash("sha256").update(`bun ${Bun.version}\n`);
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

/** Whether dist/ holds a `target` binary built from the current inputs. */
export function isFresh(target: Target, hash = inputsHash()): boolean {
  return existsSync(binaryPath(target)) && existsSync(inputsPath(target)) && readFileSync(inputsPath(target), "utf8") === hash;
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

/** Compiles one target into dist/; returns its path. */
export async function buildTarget(target: Target): Promise<string> {
  const outfile = binaryPath(target);
  const hash = inputsHash();
  const result = await Bun.build({
    entrypoints: [join(ROOT, "src", "main.ts")],
    minify: true,
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
  // The source map is embedded in the executable (stack traces name src/ lines); the copy written
  // beside it is redundant.
  rmSync(`${outfile}.map`, { force: true });
  const expected = target === "x64" ? 62 : 183;
  if (elfMachine(outfile) !== expected) throw new Error(`${outfile} was built for the wrong machine`);
  writeFileSync(inputsPath(target), hash);
  return outfile;
}

/** dist/SHA256SUMS for the binaries present, in `sha256sum -c` format. */
export function writeChecksums(): void {
  const lines = TARGETS.map(binaryPath).filter(existsSync).map((file) => {
    const digest = createHash("sha256").update(readFileSync(file)).digest("hex");
    return `${digest}  ${relative(DIST, file)}`;
  });
  writeFileSync(join(DIST, "SHA256SUMS"), lines.join("\n") + "\n");
}

/** Builds the targets that are not fresh (all with `force`) and rewrites SHA256SUMS. */
export async function build(targets: readonly Target[], force = false): Promise<void> {
  mkdirSync(DIST, { recursive: true });
  const hash = inputsHash();
  for (const target of targets) {
    if (!force && isFresh(target, hash)) {
      console.log(`dist/tollgate-linux-${target}: up to date`);
      continue;
    }
    const started = performance.now();
    const file = await buildTarget(target);
    const mib = (statSync(file).size / 1024 / 1024).toFixed(1);
    console.log(`dist/tollgate-linux-${target}: ${mib} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  writeChecksums();
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Bun.argv.slice(2), options: { target: { type: "string", default: "all" }, force: { type: "boolean", default: false } } });
  const target = values.target;
  if (target !== "all" && target !== "x64" && target !== "arm64") throw new Error("--target must be x64, arm64 or all");
  await build(target === "all" ? TARGETS : [target], values.force);
}
