import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { closest, distance } from 'fastest-levenshtein';
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

/** A config file as read: its settings, and whether it was there at all (a missing file is no error, but says why a required setting is absent). */
export interface ConfigFile {
  path: string;
  found: boolean;
  values: Record<string, unknown>;
}

export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { path, found: false, values: {} };
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
  return { path, found: true, values: parsed as Record<string, unknown> };
}

const SETTINGS: readonly string[] = Object.keys(ConfigSchema.pipe[0].entries);

/**
 * POSTLANE_* variables that are not settings but are read by name elsewhere: where the config file
 * is, the service's state folder and user (systemd unit), and those of install.sh and the test
 * harness, which spawned processes inherit. Any other POSTLANE_* variable is a misspelt setting.
 */
const OTHER_VARIABLES: ReadonlySet<string> = new Set([
  'POSTLANE_CONFIG',
  'POSTLANE_STATE_DIR',
  'POSTLANE_SERVICE_USER',
  'POSTLANE_OS_RELEASE',
  'POSTLANE_TEST_ADMIN_URL',
  'POSTLANE_TEST_PGBOUNCER',
  'POSTLANE_TEST_POOLER_URL',
  'POSTLANE_TEST_LOG_LEVEL',
  'POSTLANE_JOURNEY_TRANSCRIPT',
  'POSTLANE_BENCH_RECEIVERS',
  'POSTLANE_PG_BIN',
]);

/** The setting a misspelt key most likely meant: the nearest name, when it is near enough to be a typo. */
function didYouMean(key: string): string {
  const nearest = closest(key.toUpperCase(), SETTINGS);
  return distance(key.toUpperCase(), nearest) <= Math.max(2, Math.floor(key.length / 3))
    ? ` (did you mean ${nearest}?)`
    : '';
}

/** Keys no setting has: any in the file (it holds settings only), POSTLANE_* ones in the environment. */
function unknownKeys(file: ConfigFile, env: NodeJS.ProcessEnv): string[] {
  const known = new Set(SETTINGS);
  return [
    ...Object.keys(file.values)
      .filter((key) => !known.has(key))
      .map((key) => `${key}: unknown setting in ${file.path}${didYouMean(key)}`),
    ...Object.keys(env)
      .filter((key) => key.startsWith('POSTLANE_') && !known.has(key) && !OTHER_VARIABLES.has(key))
      .map((key) => `${key}: unknown setting in the environment${didYouMean(key)}`),
  ];
}

/** Where each setting was given, before validation: the file, the environment over it. */
export interface ConfigSources {
  file: ConfigFile;
  fromEnv: Record<string, string>;
}

/** The file and environment settings, and every problem with them at once (unreadable file, unknown keys, invalid values). */
export function checkConfig(env: NodeJS.ProcessEnv = process.env): ConfigSources & {
  config: Config | null;
  problems: string[];
} {
  const fromEnv = Object.fromEntries(
    SETTINGS.filter((key) => env[key] !== undefined && env[key] !== '').map((key) => [key, env[key]!]),
  );
  const path = configFileToRead(env);
  try {
    return check(readConfigFile(path), fromEnv, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Unreadable: what it holds is unknown, so only the unknown variables of the environment are told beside it.
    const file = { path, found: false, values: {} };
    return { file, fromEnv, config: null, problems: [...err.problems, ...unknownKeys(file, env)] };
  }
}

function check(file: ConfigFile, fromEnv: Record<string, string>, env: NodeJS.ProcessEnv) {
  const unknown = unknownKeys(file, env);
  try {
    const config = parseConfig({ ...file.values, ...fromEnv }, file.path, file.found);
    return { file, fromEnv, config: unknown.length ? null : config, problems: unknown };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { file, fromEnv, config: null, problems: [...unknown, ...err.problems] };
  }
}

/** Environment variables override the config file; every problem is reported at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { config, problems } = checkConfig(env);
  if (!config) throw new ConfigError(problems);
  return config;
}

/**
 * Settings as a config file holds them (JSON values, such as a list as an array) or as strings;
 * `path` names the file in messages, and `found` whether it exists (without it, a missing required
 * setting is told as the missing file).
 */
export function parseConfig(values: Record<string, unknown>, path: string, found = true): Config {
  const result = v.safeParse(ConfigSchema, values);
  if (!result.success) {
    const isMissing = (issue: v.BaseIssue<unknown>) => issue.input === undefined && issue.path?.length === 1;
    const missing = result.issues.filter(isMissing).map((issue) => v.getDotPath(issue)!);
    const problems = result.issues
      .filter((issue) => found || !isMissing(issue))
      .map((issue) =>
        isMissing(issue)
          ? `${v.getDotPath(issue)}: is required (set it in the environment or in ${path})`
          : `${v.getDotPath(issue) ?? 'config'}: ${issue.message}`,
      );
    // No file and a required setting absent: the file is what is missing, more likely than the setting.
    if (!found && missing.length)
      problems.unshift(
        `${path}: no such file (run postlane install, or point POSTLANE_CONFIG at the config file); without it, set ${missing.join(', ')} in the environment`,
      );
    throw new ConfigError(problems);
  }
  return Object.freeze(result.output);
}
