import { Box, Text } from 'ink';
import { wrapCell } from '../lib/text.js';

export interface FieldsProps {
  /** Label and value pairs, in order; a null value is shown as `-`. */
  rows: [string, string | null][];
  /** The terminal's width: long values wrap under themselves. Unset (piped), each pair stays on one line. */
  width?: number;
}

/** `Label   value` lines, labels aligned, values wrapped in their own column. */
export function Fields({ rows, width }: FieldsProps) {
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = width === undefined ? undefined : Math.max(20, width - labelWidth - (labelWidth === 0 ? 0 : 2));
  const lines = rows.flatMap(([label, value]) => {
    const clean = (value ?? '-').replace(/[\u0000-\u001f\u007f-\u009f]/g, '�');
    const wrapped = valueWidth === undefined ? [clean] : wrapCell(clean, valueWidth);
    const gap = labelWidth === 0 ? '' : '  ';
    return wrapped.map((part, at) => `${(at === 0 ? label : '').padEnd(labelWidth)}${gap}${part}`.trimEnd());
  });
  return (
    <Box flexDirection="column">
      <Text>{lines.join('\n')}</Text>
    </Box>
  );
}
