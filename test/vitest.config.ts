import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: [
      'test/unit/**/*.test.ts',
      'test/unit/**/*.test.tsx',
      'test/integration/**/*.test.ts',
      'test/topology/**/*.test.ts',
    ],
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/no-skips-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Far from UTC (+14): a test that leans on the machine's time zone fails here on any machine.
    env: { NODE_ENV: 'test', TZ: 'Pacific/Kiritimati' },
  },
});
