import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The pages a user reads describe what is true now: no run journal (load averages), no test file
// paths, no issue numbers. Those belong in docs/development/. Pages for contributors
// (development.md, CONTRIBUTING.md) name test files by nature and are left out.
const ROOT = new URL('../../../', import.meta.url).pathname;
const CONTRIBUTOR_PAGES = new Set(['development.md', 'CONTRIBUTING.md']);
export const USER_PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md') && !CONTRIBUTOR_PAGES.has(name))
    .map((name) => `docs/${name}`),
];

const FORBIDDEN: { what: string; pattern: RegExp }[] = [
  { what: 'a load average', pattern: /load average|\(load \d/i },
  { what: 'a path under test/', pattern: /(^|[\s`(/])test\/[\w.-]/ },
  { what: 'an issue number', pattern: /\bissues? #?\d+|(^|\s)#\d{1,4}\b/i },
  { what: 'an internal function name', pattern: /`(emitEvent|purgeWebhookDeliveries)`|the spec's/ },
];

describe('user pages under docs/', () => {
  it('lists the pages it checks', () => {
    expect(USER_PAGES).toContain('docs/operations.md');
    expect(USER_PAGES).not.toContain('docs/development.md');
  });

  it.each(USER_PAGES)('%s has no load average, test path, issue number or internal name', (page) => {
    const problems = readFileSync(join(ROOT, page), 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        FORBIDDEN.filter(({ pattern }) => pattern.test(line)).map(({ what }) => `${page}:${i + 1}: ${what}: ${line}`),
      );
    expect(problems).toEqual([]);
  });

  it('the contradictions once found are gone', () => {
    const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
    expect(read('docs/domains.md')).not.toContain('Postlane does not receive mail');
    expect(read('docs/domains.md')).toContain('POSTLANE_BOUNCE_DOMAIN');
    expect(read('docs/sending.md')).not.toContain('/usr/local/bin');
    expect(read('README.md')).not.toContain('https://app.example.com/hooks');
  });
});
