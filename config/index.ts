import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { type Config, ConfigSchema } from './schema.js';

export type { Config, ProviderConfig } from './schema.js';
export { behindPooler } from './schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const SYSTEM_CONFIG_PATH = '/etc/postlane/config.json';

/** Where `postlane install` writes the config file: system-wide for root, per user otherwise. */
export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.POSTLANE_CONFIG) return env.POSTLANE_CONFIG;
  if (process.getuid?.() === 0) return SYSTEM_CONFIG_PATH;
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'postlane', 'config.json');
}

/** Whether something is at `path`, even where this user may not look (a 0750 /etc/postlane). */
function isPresent(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (err) {
    return !['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');
  }
}

/** The file commands read: the user's own, else the machine's, which the appliance's commands are usually meant for. */
export function configFileToRead(env: NodeJS.ProcessEnv = process.env): string {
  const own = configFilePath(env);
  return env.POSTLANE_CONFIG || isPresent(own) || !isPresent(SYSTEM_CONFIG_PATH) ? own : SYSTEM_CONFIG_PATH;
}

export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new ConfigError([
      code === 'EACCES'
        ? `${path}: exists, but this user may not read it (it holds secrets); run the command as root (\`sudo postlane …\`) or as the postlane user`
        : `${path}: cannot be read (${(err as Error).message})`,
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError([`${path}: not valid JSON (${(err as Error).message})`]);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError([`${path}: must hold a JSON object`]);
  }
  return parsed as Record<string, unknown>;
}

/** Environment variables override the config file; every problem is reported at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const fromEnv = Object.fromEntries(
    Object.keys(ConfigSchema.pipe[0].entries)
      .filter((key) => env[key] !== undefined && env[key] !== '')
      .map((key) => [key, env[key]]),
  );
  const path = configFileToRead(env);
  return parseConfig({ ...readConfigFile(path), ...fromEnv }, path);
}

/** Settings as a config file holds them (JSON values, such as a list as an array) or as strings; `path` names the file in messages. */
export function parseConfig(values: Record<string, unknown>, path: string): Config {
  const result = v.safeParse(ConfigSchema, values);
  if (!result.success) {
    throw new ConfigError(
      result.issues.map((issue) => {
        const key = v.getDotPath(issue) ?? 'config';
        const missing = issue.input === undefined && issue.path?.length === 1;
        return missing ? `${key}: is required (set it in the environment or in ${path})` : `${key}: ${issue.message}`;
      }),
    );
  }
  return Object.freeze(result.output);
}
