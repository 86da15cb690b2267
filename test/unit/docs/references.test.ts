import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../../cli/program.js';
import { cliReference } from '../../../cli/reference.js';
import { configReference } from '../../../config/reference.js';
import { withMetricsReference } from '../../../server/metrics/reference.js';
import { allRoutes } from '../../../server/http/router.js';
import { guideTable } from '../../../server/http/public/guide-pages.js';
import { bounceClassTable, shapingProfileTable } from '../../../server/providers/direct/reference.js';
import { withSection } from '../../support/generated-section.js';
import { sdkRouteTable } from '../../support/sdk-routes.js';

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

  it("the README's table of contents is the guide's pages", async () => {
    const file = fileURLToPath(new URL('../../../README.md', import.meta.url));
    const page = withSection(readFileSync(file, 'utf8'), 'guide-pages', guideTable());
    const formatted = await prettier.format(page, { ...(await prettier.resolveConfig(file)), filepath: file });
    await expect(formatted).toMatchFileSnapshot('../../../README.md');
  });

  it("docs/direct-delivery.md's tables are the shipped shaping profiles and the bounce classes", async () => {
    const file = fileURLToPath(new URL('../../../docs/direct-delivery.md', import.meta.url));
    const page = withSection(
      withSection(readFileSync(file, 'utf8'), 'shaping-profiles', shapingProfileTable()),
      'bounce-classes',
      bounceClassTable(),
    );
    const formatted = await prettier.format(page, { ...(await prettier.resolveConfig(file)), filepath: file });
    await expect(formatted).toMatchFileSnapshot('../../../docs/direct-delivery.md');
  });

  it("docs/api.md's route table is every route of the SDK against the router", async () => {
    const file = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));
    const page = withSection(readFileSync(file, 'utf8'), 'sdk-routes', await sdkRouteTable(allRoutes));
    // As Prettier leaves it, which the rest of the page is kept in.
    const formatted = await prettier.format(page, { ...(await prettier.resolveConfig(file)), filepath: file });
    await expect(formatted).toMatchFileSnapshot('../../../docs/api.md');
  });
});
