/**
 * The console's files for the server: Bun bundles src/console/index.html (its scripts and styles,
 * minified, names hashed) either once, in memory, at the first request under `bun run`, or ahead of
 * time in build.ts, which embeds the output in the executable (embedded.ts). One function does both
 * so the executable serves exactly what `bun run` does.
 */
import { join } from "node:path";
import { EMBEDDED_CONSOLE } from "./embedded.ts";

/** Where the bundle's scripts and styles are served; index.html links them by absolute path, so deep links work. */
export const CONSOLE_ASSETS_PATH = "/console/assets/";

export interface ConsoleFile {
  /** `index.html`, or an asset's hashed name (`index-1zb3zzyf.js`). */
  name: string;
  contentType: string;
  body: Blob;
}

/** Bundles the console from its sources in memory. */
export async function bundleConsole(): Promise<ConsoleFile[]> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "index.html")],
    minify: true,
    publicPath: CONSOLE_ASSETS_PATH,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
  });
  if (!result.success) throw new AggregateError(result.logs, "bundling the console failed");
  return result.outputs.map((o) => {
    const name = o.path.replace(/^\.\//, "");
    return { name: name.endsWith(".html") ? "index.html" : name, contentType: o.type, body: o };
  });
}

/** The embedded bundle in the executable; otherwise a fresh one from the sources. */
export async function loadConsole(): Promise<ConsoleFile[]> {
  if (EMBEDDED_CONSOLE === undefined) return bundleConsole();
  return EMBEDDED_CONSOLE.map((f) => ({ name: f.name, contentType: f.contentType, body: Bun.file(f.path) }));
}
