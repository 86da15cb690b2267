import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BOUNCE_CLASSES,
  type BounceClass,
  createBounceClassifier,
  MATCHED_TEXT_CHARS,
} from '../../../../server/mail/bounce-classifier.js';

interface Corpus {
  /** A list where the source's label, by its own rules, covers two of our classes. */
  mapping: Record<string, BounceClass | BounceClass[]>;
  excludedLabels: Record<string, string>;
  cases: { text: string; label: string; source: string }[];
}

const corpus = JSON.parse(
  readFileSync(new URL('../../../fixtures/bounce-corpus.json', import.meta.url), 'utf8'),
) as Corpus;

/**
 * The share of the corpus whose class, mapped from its source's label, the shipped rules must
 * give. What is left are texts the source labelled from more than their words (a bare "542
 * Rejected" labelled a user unknown from the bounce's other parts), labels our taxonomy and the
 * other source reject (a Spamhaus listing labelled a user unknown, a suspended mailbox an unknown
 * user, a spam verdict a security error) and replies too rare to write a rule for; the test
 * prints each, and the agreement with each source.
 */
const REQUIRED_AGREEMENT = 0.98;

const expectedClasses = (label: string): BounceClass[] => [corpus.mapping[label] ?? []].flat();
const repositoryOf = (c: { source: string }) => c.source.split(' ')[0]!;

const dir = mkdtempSync(join(tmpdir(), 'bounce-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rulesFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('the shipped bounce rules over the corpus', () => {
  const classifyReply = createBounceClassifier();

  it('holds at least 500 real replies, each with its source and a mapped label', () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(500);
    for (const c of corpus.cases) {
      expect(c.source).not.toBe('');
      expect(expectedClasses(c.label)).not.toEqual([]);
      for (const expected of expectedClasses(c.label)) expect(Object.keys(BOUNCE_CLASSES)).toContain(expected);
      expect(corpus.excludedLabels).not.toHaveProperty(c.label);
    }
  });

  it(`agrees with the sources' labels on at least ${REQUIRED_AGREEMENT * 100}% of it`, () => {
    const disagreements = corpus.cases
      .map((c) => ({ ...c, expected: expectedClasses(c.label), got: classifyReply({ text: c.text }).class }))
      .filter((c) => !c.expected.includes(c.got));
    const agreement = 1 - disagreements.length / corpus.cases.length;
    const repositories = [...new Set(corpus.cases.map(repositoryOf))];
    console.log(
      [
        `Bounce corpus: ${(agreement * 100).toFixed(2)}% agreement (${corpus.cases.length - disagreements.length} of ${corpus.cases.length}).`,
        ...repositories.map((repository) => {
          const all = corpus.cases.filter((c) => repositoryOf(c) === repository).length;
          const missed = disagreements.filter((d) => repositoryOf(d) === repository).length;
          return `  ${repository}: ${(((all - missed) / all) * 100).toFixed(2)}% (${all - missed} of ${all})`;
        }),
        ...disagreements.map(
          (d) => `  ${d.label} → ${d.expected.join(' or ')}, got ${d.got}: ${d.text.slice(0, 160)} [${d.source}]`,
        ),
      ].join('\n'),
    );
    expect(agreement).toBeGreaterThanOrEqual(REQUIRED_AGREEMENT);
  });
});

describe('classifyReply', () => {
  const classifyReply = createBounceClassifier();

  it('lets a specific enhanced status code decide, given or read from the text', () => {
    expect(classifyReply({ code: 550, enhanced: '5.1.1', text: 'Requested action not taken' })).toEqual({
      class: 'invalid_recipient',
      permanent: true,
      backoff: false,
    });
    expect(classifyReply({ text: 'smtp; 552 5.2.2 Requested action aborted' })).toEqual({
      class: 'mailbox_full',
      permanent: true,
      backoff: false,
    });
    expect(classifyReply({ text: '550 5.7.26 Unauthenticated mail' }).class).toBe('authentication_failure');
  });

  it('reads the text where the code is generic, and a 4xx as temporary', () => {
    expect(
      classifyReply({
        code: 421,
        enhanced: '4.7.28',
        text: 'Gmail has detected an unusual rate of unsolicited mail originating from your IP address.',
      }),
    ).toEqual({ class: 'policy_block', permanent: false, backoff: true });
    expect(
      classifyReply({ code: 550, enhanced: '5.7.1', text: 'Service unavailable; blocked using zen.spamhaus.org' }),
    ).toEqual({
      class: 'policy_block',
      permanent: true,
      backoff: true,
    });
  });

  it('without any code, takes permanence from the class', () => {
    expect(classifyReply({ text: 'User unknown' })).toEqual({
      class: 'invalid_recipient',
      permanent: true,
      backoff: false,
    });
    expect(classifyReply({ text: 'Mailbox full' })).toEqual({
      class: 'mailbox_full',
      permanent: false,
      backoff: false,
    });
    expect(classifyReply({ text: 'Nyaan?' })).toEqual({ class: 'unknown', permanent: false, backoff: false });
  });

  it('backs the group off for a rate limit, a policy block or any 421, but not for greylisting', () => {
    expect(classifyReply({ code: 421, text: 'Service not available, closing channel' }).backoff).toBe(true);
    expect(
      classifyReply({ code: 451, text: '451 4.7.650 The mail server has been temporarily rate limited' }),
    ).toMatchObject({
      backoff: true,
    });
    expect(classifyReply({ code: 451, text: '4.7.1 Greylisted, please try again in 300 seconds' })).toEqual({
      class: 'policy_block',
      permanent: false,
      backoff: false,
    });
    expect(
      classifyReply({ code: 450, text: '4.2.0 <ada@example.com>: Recipient address rejected: Greylisting in action' })
        .backoff,
    ).toBe(false);
  });

  it('suppresses nothing on an unknown user after DATA, nor on an unknown host beside "no valid recipients"', () => {
    expect(
      classifyReply({
        text: 'host mx.example.jp[192.0.2.1] said: 550 Unknown user a@example.jp (in reply to end of DATA command)',
      }).class,
    ).toBe('policy_block');
    expect(
      classifyReply({ text: 'SMTP error from remote mail server after end of data: 550 : User unknown' }).class,
    ).toBe('policy_block');
    expect(
      classifyReply({ text: 'no valid recipients were found for this message a@b.example ... unknown host' }).class,
    ).toBe('dns_failure');
    expect(classifyReply({ text: '550 Unknown user a@example.jp' }).class).toBe('invalid_recipient');
  });

  it('does not read a status code out of an IP address', () => {
    expect(classifyReply({ text: 'Connection to 10.2.2.1 lost' }).class).toBe('unknown');
  });

  it('matches only the start of a hostile megabyte reply, and returns', () => {
    const hostile = '550 ' + 'user '.repeat(200_000) + 'a'.repeat(1 << 20);
    expect(classifyReply({ text: hostile }).permanent).toBe(true);
    expect(classifyReply({ text: 'x'.repeat(MATCHED_TEXT_CHARS) + ' user unknown' }).class).toBe('unknown');
  });

  it('describes every class in one line', () => {
    for (const description of Object.values(BOUNCE_CLASSES)) expect(description).toMatch(/^[^\n]{10,200}$/);
  });
});

describe('an operator rule file', () => {
  it('is tried before the shipped rules', () => {
    const classifyReply = createBounceClassifier(
      rulesFile('mine.json', {
        rules: [
          { class: 'rate_limited', code: '55x', text: 'try again in an hour' },
          { class: 'unknown', enhanced: 'x.1.1', text: 'mailbox migrating' },
        ],
      }),
    );
    expect(classifyReply({ text: '550 5.7.1 Too much mail, try again in an hour' }).class).toBe('rate_limited');
    expect(classifyReply({ text: '550 5.1.1 Mailbox migrating, retry tomorrow' }).class).toBe('unknown');
    expect(classifyReply({ text: '450 Try again in an hour' }).class).not.toBe('rate_limited');
    expect(classifyReply({ text: '550 5.1.1 User unknown' }).class).toBe('invalid_recipient');
  });

  it('may say whether a reply backs the group off', () => {
    const classifyReply = createBounceClassifier(
      rulesFile('backoff.json', {
        rules: [
          { class: 'policy_block', text: 'sender warming up', backoff: false },
          { class: 'unknown', text: 'queue full, slow down', backoff: true },
        ],
      }),
    );
    expect(classifyReply({ text: '451 Sender warming up' })).toMatchObject({ class: 'policy_block', backoff: false });
    expect(classifyReply({ text: '451 Queue full, slow down' })).toMatchObject({ class: 'unknown', backoff: true });
  });

  it.each([
    ['not JSON', '{ rules: [', /is not JSON/],
    [
      'an unknown class',
      { rules: [{ class: 'spam', text: 'x' }] },
      /rules\.0\.class: must be one of invalid_recipient/,
    ],
    [
      'a broken regex',
      { rules: [{ class: 'unknown', text: 'user (unknown' }] },
      /rules\.0\.text: must be a valid regular expression/,
    ],
    [
      'a nested quantifier',
      { rules: [{ class: 'unknown', text: '(a+)+b' }] },
      /rules\.0\.text: must not repeat a group/,
    ],
    [
      'a repeated alternation',
      { rules: [{ class: 'unknown', text: '(a|ab)*c' }] },
      /rules\.0\.text: must not repeat a group/,
    ],
    ['a rule with no condition', { rules: [{ class: 'unknown' }] }, /rules\.0: a rule needs code, enhanced or text/],
    ['a malformed code', { rules: [{ class: 'unknown', code: '5' }] }, /rules\.0\.code: must be a reply code/],
    [
      'a malformed enhanced code',
      { rules: [{ class: 'unknown', enhanced: '5.1' }] },
      /rules\.0\.enhanced: must be an enhanced/,
    ],
    ['an unknown field', { rules: [{ class: 'unknown', text: 'x', regex: 'y' }] }, /rules\.0\.regex/],
  ])('is refused with a clear message: %s', (_, content, message) => {
    const path = rulesFile('bad.json', content);
    expect(() => createBounceClassifier(path)).toThrow(message);
    expect(() => createBounceClassifier(path)).toThrow(`Bounce rule file ${path}`);
  });

  it('is refused when it cannot be read', () => {
    expect(() => createBounceClassifier(join(dir, 'missing.json'))).toThrow(/missing\.json cannot be read/);
  });
});
