/**
 * `tollgate completion bash|zsh`: a shell completion script for the commands, their subcommands and
 * their options. Derived from the commands' help texts (the lines `tollgate <command> [<sub>] … --flag`),
 * the table `tollgate help` prints, so a command or flag added to its help is completed too.
 */
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const COMPLETION_HELP = `tollgate completion bash|zsh
  Prints a completion script: source <(tollgate completion bash) in ~/.bashrc,
  or source <(tollgate completion zsh) in ~/.zshrc after compinit.`;

/** A command's subcommands (with their flags), and the flags of the command itself. */
export interface CompletionEntry {
  subcommands: Map<string, Set<string>>;
  flags: Set<string>;
}

const WORD = /^[a-z][a-z-]*$/;

/** The commands, subcommands and flags named by the help texts' `tollgate …` lines. */
export function completionTable(help: Record<string, string>): Map<string, CompletionEntry> {
  const table = new Map<string, CompletionEntry>();
  for (const [command, text] of Object.entries(help)) {
    const entry: CompletionEntry = { subcommands: new Map(), flags: new Set(["--help"]) };
    table.set(command, entry);
    for (const line of text.split("\n")) {
      const words = line.trim().split(/\s+/);
      if (words[0] !== "tollgate" || words[1] !== command) continue;
      const flags = new Set(line.match(/--[a-z][a-z-]*/g) ?? []);
      const sub = words[2];
      if (sub !== undefined && WORD.test(sub)) {
        entry.subcommands.set(sub, new Set([...(entry.subcommands.get(sub) ?? []), ...flags, "--help"]));
      } else {
        for (const flag of flags) entry.flags.add(flag);
      }
    }
  }
  return table;
}

/** `words` as a shell word list (the names are [a-z-] only, so no quoting is needed). */
const list = (words: Iterable<string>) => [...words].join(" ");

export function bashCompletion(table: Map<string, CompletionEntry>): string {
  const cases = [...table].map(([command, entry]) => {
    const subs = [...entry.subcommands].map(([sub, flags]) => `        ${sub}) opts="${list(flags)}" ;;`).join("\n");
    const subLine = entry.subcommands.size > 0
      ? `      if (( COMP_CWORD == 2 )); then COMPREPLY=($(compgen -W "${list(entry.subcommands.keys())}" -- "$cur")); return; fi\n`
      : "";
    const subCase = entry.subcommands.size > 0 ? `\n      case "\${COMP_WORDS[2]}" in\n${subs}\n      esac` : "";
    return `    ${command})\n${subLine}      opts="${list(entry.flags)}"${subCase} ;;`;
  }).join("\n");
  return `# bash completion for tollgate: source <(tollgate completion bash)
_tollgate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts=""
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W "${list(table.keys())} help" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); fi
}
complete -o default -F _tollgate tollgate`;
}

export function zshCompletion(table: Map<string, CompletionEntry>): string {
  const cases = [...table].map(([command, entry]) => {
    const subs = [...entry.subcommands].map(([sub, flags]) => `        ${sub}) opts=(${list(flags)}) ;;`).join("\n");
    const subLine = entry.subcommands.size > 0
      ? `      if (( CURRENT == 3 )); then compadd -- ${list(entry.subcommands.keys())}; return; fi\n`
      : "";
    const subCase = entry.subcommands.size > 0 ? `\n      case "$words[3]" in\n${subs}\n      esac` : "";
    return `    ${command})\n${subLine}      opts=(${list(entry.flags)})${subCase} ;;`;
  }).join("\n");
  return `# zsh completion for tollgate: source <(tollgate completion zsh), after compinit
_tollgate() {
  local -a opts
  if (( CURRENT == 2 )); then
    compadd -- ${list(table.keys())} help
    return
  fi
  case "$words[2]" in
${cases}
  esac
  if [[ "$PREFIX" == -* ]]; then compadd -- $opts; else _files; fi
}
compdef _tollgate tollgate`;
}

export function completionCommand(args: string[], help: Record<string, string>, io: CliIo): number {
  const { positionals } = parse(args, {});
  const shell = positionals[0];
  if (positionals.length !== 1 || (shell !== "bash" && shell !== "zsh")) throw new UsageError("completion takes one shell: bash or zsh");
  const table = completionTable(help);
  io.stdout(shell === "bash" ? bashCompletion(table) : zshCompletion(table));
  return EXIT.ok;
}
