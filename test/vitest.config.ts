import { defineConfig } from 'vitest/config';

/**
 * Three projects (docs/development.md, "Tests"):
 * - unit: no database, no process, no network; seconds.
 * - integration: the app on a real socket against the development PostgreSQL, as any user.
 * - system: what needs root, extra OS tools or minutes: crash tests (processes killed, PostgreSQL
 *   restarted), the topology tests (PgBouncer, Patroni, network namespaces), the shipped nginx/Caddy
 *   files and log rotation.
 * `npm test` runs all three; `npm run test:quick` runs unit and integration.
 */
const system = [
  'test/integration/crash/**/*.test.ts',
  'test/topology/**/*.test.ts',
  // Debian's nginx, Caddy and logrotate, installed as root by the setup.
  'test/integration/deploy/**/*.test.ts',
  'test/integration/cli/log-rotation.test.ts',
  // Debian's Postfix, configured and started as root, relaying to the submission listener.
  'test/integration/submission/postfix-relay.test.ts',
];

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    reporters: ['default', './test/support/no-skips-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one file at a time on two cores; integration files mostly wait (on
    // PostgreSQL, sockets, child processes), so three at once keep both cores busy. Projects that
    // run side by side must agree on it (vitest refuses otherwise): system runs after them.
    maxWorkers: 3,
    // A worker keeps the modules it loaded for its next file: importing the app again for every
    // file cost more than half the quick run. Nothing of ours lives in module state (deps.ts), and
    // a file sets what it needs of the environment before it uses it.
    isolate: false,
    // Far from UTC (+14): a test that leans on the machine's time zone fails here on any machine.
    env: { NODE_ENV: 'test', TZ: 'Pacific/Kiritimati' },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: system,
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: system,
          globalSetup: ['test/support/global-setup.ts'],
          // After the others and one file at a time: these kill processes and restart PostgreSQL
          // under timing bounds that a loaded machine would stretch.
          maxWorkers: 1,
          isolate: true,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
