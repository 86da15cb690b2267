import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { Table } from '../../../cli/components/Table.js';
import { TaskList } from '../../../cli/components/TaskList.js';
import { wrapCell } from '../../../cli/lib/text.js';

describe('TaskList', () => {
  it('shows each step with its state and detail', () => {
    const { lastFrame } = render(
      <TaskList
        tasks={[
          { title: 'Write configuration', state: 'done', detail: 'written' },
          { title: 'Apply database migrations', state: 'running' },
          { title: 'Create the first team', state: 'pending' },
        ]}
      />,
    );
    expect(lastFrame()).toBe('✔ Write configuration written\n◐ Apply database migrations\n○ Create the first team');
  });

  it('wraps a long detail under its title and a long hint under its text, never to column 0', () => {
    // ink-testing-library draws 100 columns wide.
    const long = 'two open connections had server processes 11271 and 11272, server port 5432 as in the URL';
    const lines = render(
      <TaskList tasks={[{ title: 'Connection pooler', state: 'warned', detail: long, hint: `${long}; ${long}` }]} />,
    )
      .lastFrame()!
      .split('\n');
    expect(lines[0]).toMatch(/^⚠ Connection pooler two open/);
    expect(lines[1]).toMatch(/^ {2}\S/);
    const hint = lines.findIndex((line) => line.startsWith('  → '));
    expect(hint).toBeGreaterThan(1);
    expect(lines.slice(hint + 1).length).toBeGreaterThan(0);
    for (const line of lines.slice(hint + 1)) expect(line).toMatch(/^ {4}\S/);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(100);
  });
});

describe('Table', () => {
  it('aligns columns and says when there is nothing', () => {
    expect(
      render(
        <Table
          columns={['ID', 'NAME']}
          rows={[
            ['1', 'alpha'],
            ['22', 'b'],
          ]}
        />,
      ).lastFrame(),
    ).toBe('ID  NAME\n1   alpha\n22  b');
    expect(render(<Table columns={['ID']} rows={[]} empty="No keys." />).lastFrame()).toBe('No keys.');
  });

  it('narrows the widest column to fit a width, wrapping its cells inside it', () => {
    const verdict = 'A TXT record is there, but it holds another key: replace it with the expected value.';
    const frame = render(
      <Table
        columns={['RECORD', 'NAME', 'VERDICT']}
        rows={[['DKIM', 'postlane._domainkey.acme.test', verdict]]}
        width={60}
      />,
    ).lastFrame()!;
    const lines = frame.split('\n');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^DKIM    postlane\._domainkey\.\S*\s+A TXT record is/);
    const column = lines[0]!.indexOf('VERDICT');
    expect(
      lines
        .slice(1)
        .map((line) => line.slice(column).trim())
        .join(' '),
    ).toBe(verdict);
  });

  it('keeps every row on one line without a width (piped output)', () => {
    // ink-testing-library draws 100 columns wide: the row stays under it, but over what a width would allow.
    const long = 'x'.repeat(90);
    expect(render(<Table columns={['A', 'B']} rows={[['1', long]]} />).lastFrame()).toBe(`A  B\n1  ${long}`);
  });

  it('shortens ids and times when the rows would not fit whole, and says so; whole when they fit or are piped', () => {
    const id = '3f1c2a9e-7b4d-4c8e-9a1f-0d2b3c4e5f60';
    const row = [id, '2026-11-27T04:12:50.123Z', 'reader.with.a.long.name@example.com'];
    const columns = ['ID', 'CREATED', 'TO'];
    const narrow = render(<Table columns={columns} rows={[row]} width={70} />).lastFrame()!;
    expect(narrow).toContain('…3c4e5f60  2026-11-27 04:12:50  reader.with.a.long.name@example.com');
    expect(narrow).toContain('Ids shortened to fit the terminal: --json shows them whole.');
    expect(narrow.split('\n').every((line) => line.length <= 70)).toBe(true);
    const wide = render(<Table columns={columns} rows={[row]} width={100} />).lastFrame()!;
    expect(wide).toContain(id);
    expect(wide).not.toContain('shortened');
    expect(render(<Table columns={columns} rows={[row]} />).lastFrame()).toContain(id);
  });
});

describe('wrapCell', () => {
  it('cuts a word too long for its column after a separator, else at the width', () => {
    expect(wrapCell('POSTLANE_JOB_LOCK_LIFETIME_SECONDS', 32)).toEqual(['POSTLANE_JOB_LOCK_LIFETIME_', 'SECONDS']);
    expect(wrapCell('reader.with.a.long.name.2@example.com', 24)).toEqual([
      'reader.with.a.long.name.',
      '2@example.com',
    ]);
    expect(wrapCell('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
    // A separator near the start would leave a stub: the word is cut at the width.
    expect(wrapCell('a_bcdefghij', 6)).toEqual(['a_bcde', 'fghij']);
    expect(wrapCell('two words', 20)).toEqual(['two words']);
  });
});
