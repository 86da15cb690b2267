import { Box, Text } from 'ink';

export interface TableProps {
  columns: string[];
  rows: string[][];
  empty?: string;
}

/** Left-aligned columns sized to their widest cell. */
export function Table({ columns, rows, empty = 'Nothing to show.' }: TableProps) {
  if (rows.length === 0) return <Text color="gray">{empty}</Text>;
  // Cells hold data from mail (subjects, addresses): control characters would drive the terminal.
  const cells = rows.map((row) => row.map((cell) => cell.replace(/[\u0000-\u001f\u007f-\u009f]/g, '�')));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return (
    <Box flexDirection="column">
      <Text bold>{line(columns)}</Text>
      {cells.map((row, index) => (
        <Text key={index}>{line(row)}</Text>
      ))}
    </Box>
  );
}
