import { checkConfig, ConfigError } from './index.js';
import { ConfigSchema, SETTING_DOCS } from './schema.js';

export type SettingSource = 'default' | 'file' | 'environment';

export interface EffectiveSetting {
  key: string;
  /** As the server uses it (defaults and derived values filled in), secrets hidden. */
  value: unknown;
  source: SettingSource;
}

const HIDDEN = '(hidden)';

/** A password in a URL, and fields named like secrets inside structured settings (the providers' credentials). */
function hideSecrets(value: unknown): unknown {
  if (typeof value === 'string') {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
    try {
      const url = new URL(value);
      if (!url.password) return value;
      url.password = '***';
      return url.toString();
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(hideSecrets);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        /secret|token|password/i.test(key) && inner !== undefined ? HIDDEN : hideSecrets(inner),
      ]),
    );
  return value;
}

const hide = (key: string, value: unknown) =>
  SETTING_DOCS[key as keyof typeof SETTING_DOCS].secret && value !== undefined ? HIDDEN : hideSecrets(value);

/** Every setting's effective value and where it came from (`postlane config show`); throws ConfigError when the configuration is invalid. */
export function effectiveConfig(env: NodeJS.ProcessEnv = process.env): {
  path: string;
  fileFound: boolean;
  settings: EffectiveSetting[];
} {
  const { file, fromEnv, config, problems } = checkConfig(env);
  if (!config) throw new ConfigError(problems);
  return {
    path: file.path,
    fileFound: file.found,
    // Every setting, in the schema's order: an optional one left unset is shown as such.
    settings: Object.keys(ConfigSchema.pipe[0].entries).map((key) => ({
      key,
      value: hide(key, (config as Record<string, unknown>)[key]),
      source: key in fromEnv ? 'environment' : key in file.values ? 'file' : 'default',
    })),
  };
}
