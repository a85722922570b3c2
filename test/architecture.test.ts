/**
 * The dependency rules of ARCHITECTURE.md, checked from the source of every file under src/
 * (read by test/support/source-scan.ts, type-only imports included: a domain's type files are
 * reached through its index.ts), and the module-state and comment rules of the house.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSources, specifiersOf, SRC } from "./support/source-scan.ts";

const sources = loadSources();

/** Passes when `offences` is empty; otherwise fails with the rule and one offence a line. */
function expectNone(rule: string, offences: string[]): void {
  if (offences.length > 0) throw new Error(`${rule}\n  ${offences.join("\n  ")}`);
  expect(offences).toEqual([]);
}

const under = (dir: string) => (path: string) => path.startsWith(`${dir}/`);
const isFile = (file: string) => (path: string) => path === file;
const anyOf = (...tests: Array<(path: string) => boolean>) => (path: string) => tests.some((t) => t(path));

/** `file → import` for every package import matching `pkg` from a file not allowed by `allowed`. */
function packageOffences(pkg: (specifier: string) => boolean, allowed: (path: string) => boolean): string[] {
  return sources.flatMap((f) => (allowed(f.path) ? [] : f.packages.filter(pkg).map((p) => `src/${f.path} → ${p}`)));
}

/** `file → import` for every local import of a file matching `from` that matches `to`. */
function localOffences(from: (path: string) => boolean, to: (target: string, importer: string) => boolean): string[] {
  return sources.flatMap((f) => (from(f.path) ? f.local.filter((t) => to(t, f.path)).map((t) => `src/${f.path} → ${t.startsWith("..") ? t.slice(3) : `src/${t}`}`) : []));
}

describe("the source scan itself", () => {
  test("finds the files and sees type-only imports as well as runtime ones", () => {
    expect(sources.length).toBeGreaterThan(20);
    expect(sources.map((f) => f.path)).toContain("main.ts");
    expect(specifiersOf(`import type { A } from "./a.ts";\nimport { type B } from "./b.ts";\nexport type { C } from "./c.ts";\nimport "./d.ts";\nlet e: import("./e.ts").E;`).sort())
      .toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts"]);
    // JSX parses (the console's views); the JSX runtime's import comes along.
    expect(specifiersOf(`import { A } from "./a.tsx";\nexport const b = <A />;`, "b.tsx")).toContain("./a.tsx");
  });
});

describe("dependency rules (ARCHITECTURE.md)", () => {
  test("only src/routes/**, src/http/** and src/app.ts import elysia or @elysiajs/*", () => {
    expectNone(
      "These files import elysia outside routes/, http/ and app.ts:",
      packageOffences((p) => p === "elysia" || p.startsWith("elysia/") || p.startsWith("@elysiajs/"), anyOf(under("routes"), under("http"), isFile("app.ts"))),
    );
  });

  test("only src/storage/** and src/services/** import drizzle-orm* or bun:sqlite", () => {
    expectNone(
      "These files import drizzle or bun:sqlite outside storage/ and services/ (boot.ts and cli/ use storage through its functions):",
      packageOffences((p) => p === "drizzle-orm" || p.startsWith("drizzle-orm/") || p === "bun:sqlite", anyOf(under("storage"), under("services"))),
    );
  });

  test("routes, http and app.ts reach storage only through services", () => {
    expectNone(
      "These files of the HTTP layer import src/storage directly:",
      localOffences(anyOf(under("routes"), under("http"), isFile("app.ts")), under("storage")),
    );
  });

  test("only src/jobs/scheduler.ts imports croner", () => {
    expectNone(
      "These files import croner:",
      packageOffences((p) => p === "croner" || p.startsWith("croner/"), isFile("jobs/scheduler.ts")),
    );
  });

  test("only src/main.ts reads process.env / process.argv or calls process.exit", () => {
    const pattern = /\bprocess\s*\.\s*(?:env|argv|exit)\b|\bBun\s*\.\s*(?:env|argv)\b|\bimport\.meta\.env\b/g;
    const offences = sources
      .filter((f) => f.path !== "main.ts")
      .flatMap((f) => [...new Set([...f.code.matchAll(pattern)].map((m) => m[0].replace(/\s+/g, "")))].map((m) => `src/${f.path}: ${m}`));
    expectNone("These files read the environment or argv, or exit, which only main.ts may do:", offences);
  });

  test("src/errors/** imports nothing of ours but errors/", () => {
    expectNone(
      "errors/ is a leaf, but these imports leave it:",
      localOffences(under("errors"), (t) => !under("errors")(t)),
    );
  });

  test("src/lib/** imports nothing of ours but lib/", () => {
    expectNone(
      "lib/ is a leaf, but these imports leave it:",
      localOffences(under("lib"), (t) => !under("lib")(t)),
    );
  });

  test("the console's browser code (src/console/app/**) imports nothing of ours but itself, lib/grants.ts and lib/key-view.ts, and nothing imports it", () => {
    expectNone(
      "The browser bundle must not pull in server modules, but these imports leave src/console/app:",
      localOffences(under("console/app"), (t) => !under("console/app")(t) && t !== "lib/grants.ts" && t !== "lib/key-view.ts"),
    );
    expectNone(
      "Server code must not import the browser code (src/console/bundle.ts bundles it from index.html):",
      localOffences((p) => !under("console/app")(p), (t) => under("console/app")(t)),
    );
  });

  test("services never import routes, http, app.ts or anything above them (boot, bootstrap, cli, jobs, main)", () => {
    const above = anyOf(under("routes"), under("http"), isFile("app.ts"), isFile("boot.ts"), isFile("compose.ts"), isFile("boot-cluster.ts"), isFile("bootstrap.ts"), under("cli"), under("jobs"), isFile("main.ts"));
    expectNone("These service files import a layer above services:", localOffences(under("services"), above));
  });

  test("storage imports nothing from services, routes, http or anything above them", () => {
    const allowed = anyOf(under("storage"), under("lib"), under("errors"), (t) => t.startsWith("../"));
    expectNone("These storage files import outside storage/, lib/, errors/ (and the migrations):", localOffences(under("storage"), (t) => !allowed(t)));
  });

  test("a service domain uses another domain only through its index.ts (type imports too)", () => {
    const domainOf = (path: string) => /^services\/([^/]+)\/[^/]+/.exec(path)?.[1];
    expectNone(
      "These files reach into another domain instead of going through its index.ts:",
      localOffences(under("services"), (target, importer) => {
        const to = domainOf(target);
        return to !== undefined && to !== domainOf(importer) && target !== `services/${to}/index.ts`;
      }),
    );
  });

  test("code outside services uses a domain only through its index.ts (or services/index.ts)", () => {
    expectNone(
      "These files reach into a service domain instead of going through its index.ts:",
      localOffences((p) => !under("services")(p), (target) => /^services\/[^/]+\//.test(target) && !/^services\/[^/]+\/index\.ts$/.test(target)),
    );
  });

  test("no import cycles among src files at run time", () => {
    const graph = new Map(sources.map((f) => [f.path, f.runtimeLocal.filter((t) => !t.startsWith("../"))]));
    expectNone("These runtime import cycles exist:", findCycles(graph).map((cycle) => showCycle(cycle, graph)));
  });

  test("no import cycles among src files, counting type-only imports (two domains that need each other's types are one domain)", () => {
    const graph = new Map(sources.map((f) => [f.path, f.local.filter((t) => !t.startsWith("../"))]));
    const runtime = new Map(sources.map((f) => [f.path, f.runtimeLocal]));
    expectNone("These import cycles exist ('type→' marks a type-only import):", findCycles(graph).map((cycle) => showCycle(cycle, runtime)));
  });
});

/**
 * Module-level mutable state: a top-level `let`/`var`, or a top-level collection built empty (to be
 * filled later) not typed read-only, or any typed array. Lookup tables built with their entries are
 * constants.
 * Top level is column 0: everything nested is indented.
 */
const MODULE_STATE = [
  /^(?:export\s+)?(?:let|var)\s+([A-Za-z_$][\w$]*)/gm,
  /^(?:export\s+)?const\s+([A-Za-z_$][\w$]*)\s*(?::(?!\s*(?:readonly\b|Readonly))[^=\n]+)?=\s*(?:new\s+(?:Map|Set|WeakMap|WeakSet|Array)\s*(?:<[^\n]*>)?\(\s*\)|\[\s*\])/gm,
  /^(?:export\s+)?const\s+([A-Za-z_$][\w$]*)\s*(?::[^=\n]+)?=\s*new\s+\w+Array\s*\(/gm,
];

/** The names of the module-level mutable state `code` declares. */
function moduleStateIn(code: string): string[] {
  return MODULE_STATE.flatMap((pattern) => [...code.matchAll(pattern)].map((m) => m[1]!));
}

/** Composition roots, and worker entry files (their module scope is their thread's). */
const MAY_HOLD_MODULE_STATE = anyOf(isFile("main.ts"), isFile("boot.ts"), isFile("app.ts"), isFile("services/analytics/writer-worker.ts"), isFile("storage/checkpoint-worker.ts"));

describe("module state", () => {
  test("the scan finds top-level lets and empty collections, and not nested ones or filled tables", () => {
    const code = "let turnEnd: Promise<void> | undefined;\nexport const seen = new Map<string, number>();\nconst queue: string[] = [];\n"
      + "const counts = new Float64Array(8);\nconst NAMES = new Set([\"a\"]);\nconst NONE: readonly string[] = [];\nfunction f() {\n  let local = 1;\n  const m = new Map();\n}\n";
    expect(moduleStateIn(code)).toEqual(["turnEnd", "seen", "queue", "counts"]);
  });

  test("no module-level mutable state outside the composition roots (boot.ts, app.ts, main.ts) and worker entry files", () => {
    expectNone(
      "These files keep module-level mutable state; move it into an object a composition root builds:",
      sources.filter((f) => !MAY_HOLD_MODULE_STATE(f.path)).flatMap((f) => moduleStateIn(f.code).map((name) => `src/${f.path}: ${name}`)),
    );
  });
});

describe("comments", () => {
  test("no comment in src/ states a measurement: the numbers live in BENCHMARKS.md, where they are dated", () => {
    const offences = sources.flatMap((f) => measurementsIn(readFileSync(join(SRC, f.path), "utf8")).map((m) => `src/${f.path}:${m}`));
    expectNone("These comments state a measurement; keep the reason in the comment and move the number to BENCHMARKS.md:", offences);
  });
});

/** A number or a range of them (`3–5`, `10 to 17`), and a time or size unit right after it. */
const MEASURE = String.raw`\d[\d.,]*(?:\s*(?:[-–→]|to)\s*\d[\d.,]*)?\s*(?:ns|µs|us|ms|%|[KMG]i?B|kB)(?![\p{L}\d])`;
/** Within one sentence: any character but a full stop that ends it. */
const SAME_SENTENCE = String.raw`(?:[^.]|\.(?!\s)){0,120}?`;
const MEASUREMENT_PATTERNS = [
  new RegExp(String.raw`\d[\d.,]*(?:\s*[-–]\s*\d[\d.,]*)?\s*(?:µs|us|ns)(?![\p{L}\d])`, "u"),
  new RegExp(String.raw`\b(?:measur|profil|took\b)${SAME_SENTENCE}${MEASURE}`, "iu"),
  new RegExp(String.raw`${MEASURE}${SAME_SENTENCE}\b(?:measur|profil)`, "iu"),
];

/** `line: excerpt` for each comment of `raw` that states a measurement (a µs value, or a timed or sized number beside "measured", "profile" or "took"). */
function measurementsIn(raw: string): string[] {
  const found: string[] = [];
  for (const m of raw.matchAll(/\/\*[\s\S]*?\*\/|(?<![:\\])\/\/.*$/gm)) {
    const text = m[0].replace(/^\s*(?:\/\*+|\*\/?|\/\/)/gm, " ").replace(/\s+/g, " ");
    const hit = MEASUREMENT_PATTERNS.map((p) => p.exec(text)).find((h) => h !== null);
    if (hit) found.push(`${raw.slice(0, m.index).split("\n").length}: …${hit[0]}…`);
  }
  return found;
}

/** `src/a.ts → src/b.ts type→ src/c.ts → src/a.ts`; an edge missing from `runtime` is type-only. */
function showCycle(cycle: string[], runtime: Map<string, string[]>): string {
  return cycle.map((p, i) => (i === 0 ? `src/${p}` : `${runtime.get(cycle[i - 1]!)?.includes(p) ? "→" : "type→"} src/${p}`)).join(" ");
}

/** One cycle per strongly connected component of more than one file (or a file importing itself). */
function findCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;

  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);

  // Show each component as one concrete cycle: a shortest path from its first file back to itself.
  return components.map((component) => {
    const members = new Set(component);
    const start = [...members].sort()[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    const seen = new Set([start]);
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) {
          const path = [v];
          while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
          return [...path, start];
        }
        if (!seen.has(w)) {
          seen.add(w);
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    return [...component, component[0]!];
  });
}
