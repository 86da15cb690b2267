import { describe, expect, it } from 'vitest';
import { createProgram } from '../../../cli/program.js';
import { cliReference } from '../../../cli/reference.js';
import { readFileSync } from 'node:fs';
import { configReference } from '../../../config/reference.js';
import { withMetricsReference } from '../../../server/metrics/reference.js';

// docs/ holds these generated pages; `npm run docs` rewrites them, and this fails while they are stale.
describe('generated references', () => {
  it('docs/configuration.md is the configuration schema', async () => {
    await expect(configReference()).toMatchFileSnapshot('../../../docs/configuration.md');
  });

  it("docs/operations.md's metrics table is the registry GET /metrics serves", async () => {
    const page = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
    await expect(withMetricsReference(page)).toMatchFileSnapshot('../../../docs/operations.md');
  });

  it('docs/cli.md is the commander program', async () => {
    await expect(cliReference(createProgram())).toMatchFileSnapshot('../../../docs/cli.md');
  });
});
