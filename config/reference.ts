import type * as v from 'valibot';
import { ConfigSchema, SETTING_DOCS } from './schema.js';

type Schema = v.GenericSchema & {
  type: string;
  default?: unknown;
  wrapped?: Schema;
  pipe?: readonly { type: string; requirement?: unknown }[];
  options?: unknown[];
};

const code = (value: string) => `\`${value}\``;
const withThousands = (n: number) => n.toLocaleString('en-US');

function defaultOf(name: string, schema: Schema): string {
  const documented = SETTING_DOCS[name as keyof typeof SETTING_DOCS].default;
  if (documented) return documented;
  if (schema.type !== 'optional') return 'required';
  const value = schema.default;
  if (value === undefined) return 'unset';
  if (value === '' || (Array.isArray(value) && value.length === 0)) return 'empty';
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

/** The bounds a setting's pipe checks, or the values it takes. */
function rangeOf(schema: Schema): string {
  const inner = schema.type === 'optional' ? schema.wrapped! : schema;
  if (inner.type === 'picklist') return (inner.options as string[]).map(code).join(', ');
  const actions = inner.pipe ?? [];
  const bound = (type: string) => actions.find((action) => action.type === type)?.requirement as number | undefined;
  const [min, max] = [bound('min_value'), bound('max_value')];
  if (min !== undefined && max !== undefined) return `${withThousands(min)}–${withThousands(max)}`;
  const first = actions[0] as Schema | undefined;
  if (first?.type === 'union' && actions.some((action) => action.type === 'transform') && inner.pipe?.length === 2) {
    // Flags: true/false, or 1/0 from the environment.
    const options = (first as unknown as { options: Schema[] }).options;
    if (options.some((option) => option.type === 'boolean')) return '`true` or `false`';
  }
  return '';
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** docs/configuration.md: every setting with its default, range and meaning, from the schema itself. */
export function configReference(): string {
  const entries = Object.entries(ConfigSchema.pipe[0].entries as Record<string, Schema>);
  return [
    '<!-- Generated from config/schema.ts by `npm run docs`; a test fails when it is stale. Edit SETTING_DOCS there, not this file. -->',
    '# Configuration reference',
    '',
    'Every setting is read from the environment or from a JSON config file whose keys are the variable',
    'names (`{"DATABASE_URL": "postgres://…", "POSTLANE_PORT": 3000}`). Environment variables override',
    'the file. Invalid settings are all listed at once, and the command exits 1. Whole numbers may be',
    'strings (environment) or numbers (file); lists are comma-separated in the environment and JSON',
    'arrays in the file.',
    '',
    'The config file is `$POSTLANE_CONFIG` if set, else `/etc/postlane/config.json` when running as',
    'root, else `~/.config/postlane/config.json` (`$XDG_CONFIG_HOME/postlane/config.json`); a user with',
    'no file of their own reads `/etc/postlane/config.json`.',
    '',
    '| Setting | Default | Range | Meaning |',
    '|---|---|---|---|',
    ...entries.map(
      ([name, schema]) =>
        `| ${code(name)} | ${cell(defaultOf(name, schema))} | ${cell(rangeOf(schema))} | ${cell(SETTING_DOCS[name as keyof typeof SETTING_DOCS].description)} |`,
    ),
    '',
  ].join('\n');
}
