import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { configFilePath, parseConfig, readConfigFile } from '../../config/index.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { generateSecretKey } from '../../server/security/secret-box.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { listTeams } from '../../server/services/teams/list-teams.js';
import { migrate, waitForDatabase } from '../../server/db/orm.js';
import { withDatabase } from '../lib/context.js';
import { selfSignedSubmissionCert } from './submission-cert.js';
import type { AnyTask } from '../lib/render.js';

export interface InstallOptions {
  databaseUrl?: string;
  host?: string;
  port?: string;
  publicUrl?: string;
  teamName: string;
}

export interface InstallResult {
  config_path: string;
  config_written: boolean;
  migrations_applied: string[];
  team: { id: string; name: string; created: boolean };
  /** Only on the run that created the team: the token is shown this once. */
  api_key: { id: string; token: string } | null;
}

/**
 * Idempotent: keeps every value already in the config file (flags only fill in or change what is
 * given), applies pending migrations, and creates the first team and key only if there is no team.
 */
export function installTasks(options: InstallOptions): { tasks: AnyTask[]; result: () => InstallResult } {
  const path = configFilePath();
  const partial: Partial<InstallResult> = { config_path: path };
  const tasks: AnyTask[] = [
    {
      title: `Check the database and write ${path}`,
      run: async () => {
        const existing = readConfigFile(path).values;
        const given = Object.fromEntries(
          Object.entries({
            DATABASE_URL: options.databaseUrl ?? (existing.DATABASE_URL ? undefined : process.env.DATABASE_URL),
            POSTLANE_HOST: options.host,
            POSTLANE_PORT: options.port && /^\d+$/.test(options.port) ? Number(options.port) : options.port,
            POSTLANE_PUBLIC_URL: options.publicUrl,
          }).filter(([, value]) => value !== undefined),
        );
        // Generated once and then kept: replacing it would lose every secret sealed with it.
        const next: Record<string, unknown> = { POSTLANE_SECRET_KEY: generateSecretKey(), ...existing, ...given };
        // The submission listener's first certificate, self-signed, when the config names none.
        if (!next.POSTLANE_SUBMISSION_TLS_CERT) {
          const publicUrl = (next.POSTLANE_PUBLIC_URL as string | undefined) ?? 'http://localhost';
          mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
          const generated = selfSignedSubmissionCert(dirname(path), new URL(publicUrl).hostname);
          if (generated)
            Object.assign(next, {
              POSTLANE_SUBMISSION_TLS_CERT: generated.cert,
              POSTLANE_SUBMISSION_TLS_KEY: generated.key,
            });
        }
        partial.config_written = !existsSync(path) || JSON.stringify(next) !== JSON.stringify(existing);
        // Validate and reach the database before writing, so a bad URL is never saved.
        // As the service will read it: the file alone, its values as written (a list may be an array).
        const candidate = parseConfig(next, path);
        await waitForDatabase(candidate, null, 10_000);
        if (partial.config_written) {
          mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
          writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
        }
        // The file holds the database password: never readable by others, also if it existed before.
        // Its group keeps read access: install.sh gives it to the service's user (root:postlane 0640).
        chmodSync(path, statSync(path).mode & 0o640);
        return partial.config_written;
      },
      detail: (written: boolean) => (written ? 'written' : 'unchanged'),
    },
    {
      title: 'Apply database migrations',
      run: async () => {
        partial.migrations_applied = await withDatabase(({ config }) => migrate(config));
        return partial.migrations_applied;
      },
      detail: (applied: string[]) => (applied.length ? `${applied.length} applied` : 'up to date'),
    },
    {
      title: 'Create the first team and API key',
      run: async () =>
        withDatabase(async ({ orm }) => {
          const [existing] = await listTeams({ orm });
          if (existing) {
            partial.team = { id: existing.id, name: existing.name, created: false };
            partial.api_key = null;
            return false;
          }
          const team = await createTeam({ orm }, { name: options.teamName });
          const { apiKey, token } = await createApiKey({ orm }, team.id, {
            name: `install ${randomUUID().slice(0, 8)}`,
            permission: 'full_access',
          });
          partial.team = { id: team.id, name: team.name, created: true };
          partial.api_key = { id: apiKey.id, token };
          return true;
        }),
      detail: (created: boolean) => (created ? 'created' : 'a team exists already; kept'),
    },
  ];
  return { tasks, result: () => partial as InstallResult };
}
