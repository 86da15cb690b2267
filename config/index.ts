import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { type Config, ConfigSchema } from './schema.js';

export type { Config, ProviderConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Where `postlane install` writes the config file: system-wide for root, per user otherwise. */
export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.POSTLANE_CONFIG) return env.POSTLANE_CONFIG;
  if (process.getuid?.() === 0) return '/etc/postlane/config.json';
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'postlane', 'config.json');
}

export function readConfigFile(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
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
  const path = configFilePath(env);
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
