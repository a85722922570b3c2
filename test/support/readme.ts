/** The README's shell blocks, for tests that run them as a reader would paste them. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./cli.ts";

/** The first ```sh block after `heading` in README.md. */
export function readmeBlock(heading: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf(heading);
  if (at < 0) throw new Error(`README.md has no heading "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  if (!block) throw new Error(`README.md has no sh block after "${heading}"`);
  return block;
}
