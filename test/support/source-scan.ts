/**
 * The source of every file under src/, as the architecture tests read it. Runtime imports come
 * from Bun.Transpiler#scanImports; it drops type-only imports (`import type`, `export type … from`),
 * so those are read from the import/export statements as well: a type import is a dependency too.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "../..");
export const SRC = join(ROOT, "src");

export interface SourceFile {
  /** Path relative to src/, with forward slashes: `services/keys/create.ts`. */
  path: string;
  /** The code with comments removed. */
  code: string;
  /** Package specifiers (`elysia`, `drizzle-orm/sqlite-core`, `bun:sqlite`, `node:fs`). */
  packages: string[];
  /** Relative imports resolved against src/: `services/auth/index.ts`, or `../package.json` outside src. */
  local: string[];
  /** The subset of `local` that exists at run time (not type-only). */
  runtimeLocal: string[];
}

export function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:\\])\/\/.*$/gm, "$1");
}

const transpilers = { ts: new Bun.Transpiler({ loader: "ts" }), tsx: new Bun.Transpiler({ loader: "tsx" }) };
/** `import … from "x"`, `import type … from "x"`, `export … from "x"` (type-only ones too), and `import("x")` types. */
const STATEMENT_FROM = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm;
const IMPORT_TYPE_EXPR = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

function runtimeSpecifiersOf(code: string, path = "source.ts"): string[] {
  const transpiler = path.endsWith(".tsx") ? transpilers.tsx : transpilers.ts;
  return [...new Set(transpiler.scanImports(code).map((i) => i.path))];
}

/** Runtime imports from the transpiler (on the raw source), plus type-only ones from the statements (comments removed). */
export function specifiersOf(raw: string, path = "source.ts"): string[] {
  const code = stripComments(raw);
  const found = new Set(runtimeSpecifiersOf(raw, path));
  for (const m of code.matchAll(STATEMENT_FROM)) found.add(m[1]!);
  for (const m of code.matchAll(IMPORT_TYPE_EXPR)) found.add(m[1]!);
  return [...found];
}

export function loadSources(): SourceFile[] {
  const files: SourceFile[] = [];
  for (const path of new Glob("**/*.{ts,tsx,mts,cts,js,mjs}").scanSync({ cwd: SRC })) {
    const raw = readFileSync(join(SRC, path), "utf8");
    const code = stripComments(raw);
    const specifiers = specifiersOf(raw, path);
    const resolveLocal = (specs: string[]) => specs
      .filter((s) => s.startsWith("."))
      .map((s) => relative(SRC, resolve(SRC, dirname(path), s)).split("\\").join("/"));
    files.push({
      path: path.split("\\").join("/"),
      code,
      packages: specifiers.filter((s) => !s.startsWith(".")),
      local: resolveLocal(specifiers),
      runtimeLocal: resolveLocal(runtimeSpecifiersOf(raw, path)),
    });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
