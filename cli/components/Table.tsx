import { Box, Text } from 'ink';
import { wrapCell } from '../lib/text.js';

export interface TableProps {
  columns: string[];
  rows: string[][];
  empty?: string;
  /** The terminal's width: wider columns wrap inside themselves. Unset (piped output), every row stays on one line. */
  width?: number;
}

const GAP = 2;
/** No column is squeezed below this (or its header): narrower, ids and dates become unreadable. */
const MIN_COLUMN = 8;

/** Natural widths, then the widest column narrowed one character at a time until the row fits. */
export function fitWidths(natural: number[], minimums: number[], width: number | undefined): number[] {
  const widths = [...natural];
  if (width === undefined) return widths;
  const room = width - GAP * (widths.length - 1);
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > room) {
    let widest = -1;
    for (const [i, w] of widths.entries()) if (w > minimums[i]! && (widest < 0 || w > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]! -= 1;
    total -= 1;
  }
  return widths;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}([0-9a-f]{8})$/i;
const ISO_TIME = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(\.\d+)?Z$/;

/**
 * A cell as a narrow terminal shows it: a uuid by its last 8 characters (ids are time-ordered, so
 * rows made together share their first ones; the end is random), a time to the second.
 */
function narrowed(cell: string): string {
  const id = UUID.exec(cell);
  if (id) return `…${id[1]}`;
  const time = ISO_TIME.exec(cell);
  return time ? `${time[1]} ${time[2]}` : cell;
}

const naturalWidths = (columns: string[], cells: string[][]) =>
  columns.map((column, i) => Math.max(column.length, ...cells.map((row) => (row[i] ?? '').length)));

/**
 * Left-aligned columns sized to their widest cell, narrowed to fit `width` with cells wrapped in
 * their column. When the rows would not fit whole, ids and times are shortened first (wrapped, they
 * could not be copied); piped output and `--json` keep them whole.
 */
export function Table({ columns, rows, empty = 'Nothing to show.', width }: TableProps) {
  if (rows.length === 0) return <Text color="gray">{empty}</Text>;
  // Cells hold data from mail (subjects, addresses): control characters would drive the terminal.
  const whole = rows.map((row) => row.map((cell) => cell.replace(/[\u0000-\u001f\u007f-\u009f]/g, '�')));
  const fits = (cells: string[][]) =>
    width === undefined ||
    naturalWidths(columns, cells).reduce((a, b) => a + b, 0) + GAP * (columns.length - 1) <= width;
  const cells = fits(whole) ? whole : whole.map((row) => row.map(narrowed));
  const shortenedIds = cells.some((row, r) => row.some((cell, i) => cell !== whole[r]![i] && UUID.test(whole[r]![i]!)));
  const natural = naturalWidths(columns, cells);
  const widths = fitWidths(
    natural,
    natural.map((w, i) => Math.min(w, Math.max(MIN_COLUMN, columns[i]!.length))),
    width,
  );
  const lines = (row: string[]) => {
    const wrapped = row.map((cell, i) => wrapCell(cell, widths[i]!));
    const height = Math.max(...wrapped.map((w) => w.length));
    return Array.from({ length: height }, (_, at) =>
      wrapped
        .map((cellLines, i) => (cellLines[at] ?? '').padEnd(widths[i]!))
        .join(' '.repeat(GAP))
        .trimEnd(),
    );
  };
  return (
    <Box flexDirection="column">
      <Text bold>{lines(columns).join('\n')}</Text>
      {cells.map((row, index) => (
        <Text key={index}>{lines(row).join('\n')}</Text>
      ))}
      {shortenedIds ? <Text color="gray">Ids shortened to fit the terminal: --json shows them whole.</Text> : null}
    </Box>
  );
}
