/**
 * `tollgate completion bash|zsh`: every command and subcommand of `tollgate help` is completed, and
 * the bash script parses and completes as bash runs it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDataDir } from "../support/cli.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

let data: ReturnType<typeof tempDataDir>;
beforeAll(() => { data = tempDataDir(); });
afterAll(() => data.cleanup());

const run = (args: string[]) => runCli(args, { dataDir: data.dir });

/** The commands `tollgate help` lists: the second word of each `tollgate <command>` line. */
async function helpCommands(): Promise<string[]> {
  const help = (await run(["help"])).stdout;
  return [...new Set([...help.matchAll(/^\s*tollgate ([a-z-]+)/gm)].map((m) => m[1]!))];
}

/** What bash completes for the words `line` (the last one being completed), with the script loaded. */
function bashComplete(script: string, words: string[]): string[] {
  const file = join(data.parent, "completion.bash");
  writeFileSync(file, script);
  const array = words.map((w) => `'${w}'`).join(" ");
  const proc = Bun.spawnSync(["bash", "-c", `source ${file}; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _tollgate; printf '%s\\n' "\${COMPREPLY[@]}"`]);
  return proc.stdout.toString().split("\n").filter(Boolean);
}

describe("completion", () => {
  test("bash: bash -n accepts it, and it names every command and subcommand", async () => {
    const r = await run(["completion", "bash"]);
    expect(r.code).toBe(0);
    const file = join(data.parent, "syntax.bash");
    writeFileSync(file, r.stdout);
    expect(Bun.spawnSync(["bash", "-n", file]).exitCode).toBe(0);
    const commands = await helpCommands();
    expect(commands).toEqual(expect.arrayContaining(["serve", "migrate", "workspace", "root-key", "api", "key", "stats", "backup", "restore", "config", "completion", "ready", "version"]));
    expect(bashComplete(r.stdout, ["tollgate", ""]).sort()).toEqual([...commands, "help"].sort());
    expect(bashComplete(r.stdout, ["tollgate", "res"])).toEqual(["restore"]);
    expect(bashComplete(r.stdout, ["tollgate", "ready", "--"])).toEqual(["--help", "--wait", "--pid"]);
    expect(bashComplete(r.stdout, ["tollgate", "workspace", ""])).toEqual(["create", "list", "update"]);
    expect(bashComplete(r.stdout, ["tollgate", "root-key", "create", "--"])).toEqual(["--workspace", "--name", "--permission", "--expires", "--help"]);
    expect(bashComplete(r.stdout, ["tollgate", "root-key", "list", "--"])).toEqual(["--workspace", "--json", "--help"]);
    expect(bashComplete(r.stdout, ["tollgate", "api", ""])).toEqual(["list", "create", "delete"]);
    expect(bashComplete(r.stdout, ["tollgate", "api", "list", "--"])).toEqual(["--workspace", "--json", "--help"]);
    expect(bashComplete(r.stdout, ["tollgate", "key", ""])).toEqual(["create", "list", "get", "disable", "enable", "delete", "credits"]);
    expect(bashComplete(r.stdout, ["tollgate", "key", "create", "--"])).toEqual([
      "--api", "--name", "--prefix", "--credits", "--expires", "--permission", "--role", "--external-id", "--meta", "--recoverable", "--workspace", "--help",
    ]);
    expect(bashComplete(r.stdout, ["tollgate", "stats", "--"])).toEqual(["--help", "--workspace", "--since", "--api", "--json"]);
    expect(bashComplete(r.stdout, ["tollgate", "key", "list", "--"])).toEqual(["--api", "--search", "--limit", "--workspace", "--json", "--help"]);
    expect(bashComplete(r.stdout, ["tollgate", "config", "print", "--j"])).toEqual(["--json"]);
  });

  test("zsh: it names every command and subcommand, and registers itself", async () => {
    const r = await run(["completion", "zsh"]);
    expect(r.code).toBe(0);
    for (const command of await helpCommands()) expect(r.stdout).toContain(`    ${command})`);
    expect(r.stdout).toContain("compadd -- create list update");
    expect(r.stdout).toContain("compadd -- check print");
    expect(r.stdout).toContain("compadd -- list create delete");
    expect(r.stdout).toContain("compadd -- create list get disable enable delete credits");
    expect(r.stdout.trimEnd().endsWith("compdef _tollgate tollgate")).toBe(true);
  });

  test.skipIf(skipWithout(missing.zsh(), "zsh -n of the zsh completion"))("zsh -n accepts it", async () => {
    requireTool(missing.zsh());
    const file = join(data.parent, "syntax.zsh");
    writeFileSync(file, (await run(["completion", "zsh"])).stdout);
    expect(Bun.spawnSync(["zsh", "-n", file]).exitCode).toBe(0);
  });

  test("2 without one shell of bash and zsh", async () => {
    for (const args of [["completion"], ["completion", "fish"], ["completion", "bash", "zsh"]]) {
      expect({ args, code: (await run(args)).code }).toEqual({ args, code: 2 });
    }
  });
});
