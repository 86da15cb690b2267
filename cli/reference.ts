import type { Argument, Command, Option } from 'commander';

const cell = (text: string) => text.replace(/\|/g, '\\|');

function argumentUsage(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '…' : ''}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

function optionLine(option: Option): string {
  const facts = [
    option.argChoices ? `one of ${option.argChoices.map((c) => `\`${c}\``).join(', ')}` : null,
    option.defaultValue !== undefined && option.defaultValue !== false
      ? `default \`${Array.isArray(option.defaultValue) ? option.defaultValue.join(',') : String(option.defaultValue)}\``
      : null,
  ].filter(Boolean);
  return `| \`${option.flags}\` | ${cell(option.description)}${facts.length ? ` (${facts.join('; ')})` : ''} |`;
}

const aliasNote = (command: Command, path: string[]) =>
  command.aliases().length
    ? ` (also \`postlane ${command
        .aliases()
        .map((alias) => [...path, alias].join(' '))
        .join('`, `postlane ')}\`)`
    : '';

/** A command and, under it, every subcommand: usage, description, aliases, arguments and options. */
function commandSection(command: Command, path: string[]): string[] {
  const name = [...path, command.name()].join(' ');
  const children = command.commands as Command[];
  if (children.length > 0) {
    return [
      `## ${name}`,
      '',
      `${command.description()}${aliasNote(command, path)}.`,
      '',
      ...children.flatMap((child) => commandSection(child, [...path, command.name()])),
    ];
  }
  const args = (command.registeredArguments as Argument[]).map(argumentUsage).join(' ');
  const options = command.options as Option[];
  return [
    `${path.length > 0 ? '###' : '##'} ${name}`,
    '',
    '```',
    `postlane ${name}${args ? ` ${args}` : ''}${options.length ? ' [options]' : ''}`,
    '```',
    '',
    `${command.description()}${aliasNote(command, path)}.`,
    '',
    ...(command.registeredArguments as Argument[]).flatMap((argument) =>
      argument.description ? [`- \`${argumentUsage(argument)}\`: ${argument.description}`] : [],
    ),
    ...((command.registeredArguments as Argument[]).some((argument) => argument.description) ? [''] : []),
    ...(options.length ? ['| Option | Meaning |', '|---|---|', ...options.map(optionLine), ''] : []),
  ];
}

/** docs/cli.md: every command of the program as `--help` describes it. */
export function cliReference(program: Command): string {
  return [
    '<!-- Generated from the commander program (cli/program.ts) by `npm run docs`; a test fails when it is stale. -->',
    '# CLI reference',
    '',
    `${program.description()}.`,
    '',
    'Global options, anywhere on the line:',
    '',
    '| Option | Meaning |',
    '|---|---|',
    ...(program.options as Option[]).map(optionLine),
    '',
    'Failures exit 1 with a message on stderr; progress is drawn on stderr and data goes to stdout.',
    '',
    // Facts that hold across commands, so no single command's help can carry them.
    "`--team` takes a team's id or its name (when no other team has that name). Without it, a command that names a",
    'domain, an API key or a webhook acts for the team that owns it; any other command acts for the only team, and',
    'asks for `--team` once there are several. `teams show`, `unpause` and `update` take the same id or name as',
    'their argument.',
    '',
    "Tables fit the terminal's width (long cells wrap inside their column); piped, each row stays on one line.",
    'A user whose own config file does not exist reads `/etc/postlane/config.json`; when that file is not readable',
    'to them, the command says so (run it with `sudo`, or as the `postlane` user).',
    '',
    ...(program.commands as Command[]).flatMap((command) => commandSection(command, [])),
  ].join('\n');
}
