import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../server/metrics/metrics.js';

const docs = fileURLToPath(new URL('../../../docs/', import.meta.url));
const promtool = (...args: string[]) => execFileSync('promtool', args, { cwd: docs, encoding: 'utf8' });

describe('docs/alerts.yml', () => {
  it('passes promtool check rules, and its unit tests (docs/alerts.test.yml) pass', () => {
    expect(promtool('check', 'rules', 'alerts.yml')).toContain('SUCCESS: 6 rules found');
    expect(promtool('test', 'rules', 'alerts.test.yml')).toContain('SUCCESS');
  });

  it('names only Postlane metrics that /metrics serves', () => {
    const registered = new Metrics({} as ConstructorParameters<typeof Metrics>[0]).registry
      .getMetricsAsArray()
      .map((metric) => metric.name);
    const named = [...readFileSync(`${docs}alerts.yml`, 'utf8').matchAll(/\bpostlane_[a-z_]+/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(4);
    expect(named.filter((name) => !registered.includes(name))).toEqual([]);
  });

  it('is explained, alert by alert, in docs/operations.md', () => {
    const operations = readFileSync(`${docs}operations.md`, 'utf8');
    for (const [, alert] of readFileSync(`${docs}alerts.yml`, 'utf8').matchAll(/- alert: (\w+)/g))
      expect(operations).toContain(`**${alert}**`);
  });
});
