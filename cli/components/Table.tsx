import { Box, Text } from 'ink';

export interface TableProps {
  columns: string[];
  rows: string[][];
  empty?: string;
}

/** Left-aligned columns sized to their widest cell. */
export function Table({ columns, rows, empty = 'Nothing to show.' }: TableProps) {
  if (rows.length === 0) return <Text color="gray">{empty}</Text>;
  const widths = columns.map((column, i) => Math.max(column.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return (
    <Box flexDirection="column">
      <Text bold>{line(columns)}</Text>
      {rows.map((row, index) => (
        <Text key={index}>{line(row)}</Text>
      ))}
    </Box>
  );
}
