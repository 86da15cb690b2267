import type { Command } from 'commander';

/** Each command path (`''` for the program itself, `'domains'`, …) with the words that may follow it: subcommands and long options. */
function commandWords(program: Command): Map<string, string[]> {
  const words = new Map<string, string[]>();
  const walk = (command: Command, path: string[]) => {
    const options = command.options.map((option) => option.long).filter((long): long is string => Boolean(long));
    words.set(path.join(' '), [...command.commands.map((sub) => sub.name()), ...options, '--help']);
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return words;
}

function bash(program: Command): string {
  const name = program.name();
  const all = [...commandWords(program)];
  const cases = all.map(([path, words]) => `    "${path}") words="${words.join(' ')}" ;;`);
  return [
    `# ${name} completion for bash: source <(${name} completion bash)`,
    `_${name}() {`,
    '  local cur=${COMP_WORDS[COMP_CWORD]} path="" next words="" w',
    `  local paths="|${all.map(([path]) => path).join('|')}|"`,
    // The command path: the words typed so far that extend a known path (not options, nor their values).
    '  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do',
    '    next="${path:+$path }$w"',
    '    case "$paths" in *"|$next|"*) path="$next" ;; esac',
    '  done',
    '  case "$path" in',
    ...cases,
    '  esac',
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    '}',
    `complete -F _${name} ${name}`,
    '',
  ].join('\n');
}

/** zsh runs the bash function through bashcompinit, so both shells complete the same words. */
const zsh = (program: Command) =>
  [
    `# ${program.name()} completion for zsh: source <(${program.name()} completion zsh)`,
    'autoload -U +X compinit && compinit',
    'autoload -U +X bashcompinit && bashcompinit',
    bash(program).split('\n').slice(1).join('\n'),
  ].join('\n');

function fish(program: Command): string {
  const name = program.name();
  const lines = [`# ${name} completion for fish: ${name} completion fish | source`, `complete -c ${name} -f`];
  for (const [path, words] of commandWords(program)) {
    const parts = path ? path.split(' ') : [];
    // fish's condition: every word of the path typed, and no subcommand of the last one yet.
    const seen = parts.map((part) => `__fish_seen_subcommand_from ${part}`);
    const subcommands = words.filter((word) => !word.startsWith('--'));
    const condition = [...seen, subcommands.length ? `not __fish_seen_subcommand_from ${subcommands.join(' ')}` : null]
      .filter(Boolean)
      .join('; and ');
    const when = parts.length === 0 ? '__fish_use_subcommand' : condition;
    if (subcommands.length) lines.push(`complete -c ${name} -n '${when}' -a '${subcommands.join(' ')}'`);
    for (const option of words.filter((word) => word.startsWith('--')))
      lines.push(
        `complete -c ${name} -n '${parts.length ? seen.join('; and ') : '__fish_use_subcommand'}' -l ${option.slice(2)}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

export const COMPLETION_SHELLS = { bash, zsh, fish } as const;
export type CompletionShell = keyof typeof COMPLETION_SHELLS;

/** A completion script for `shell`, generated from the command tree (commander has none of its own). */
export const completionScript = (program: Command, shell: CompletionShell): string => COMPLETION_SHELLS[shell](program);
