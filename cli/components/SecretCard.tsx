import { Box, Text } from 'ink';
import { useContext } from 'react';
import { PlainOutput } from '../lib/plain-output.js';

export interface SecretCardProps {
  title: string;
  rows: [label: string, value: string][];
  /** The value to copy now: shown once, highlighted. */
  secret: { label: string; value: string };
  note: string;
}

/**
 * A framed card for a secret shown once (a rotated webhook signing secret). Piped, plain lines
 * instead, with the secret alone on the line after its label, for `grep`, `tail -1` or a copy.
 */
export function SecretCard({ title, rows, secret, note }: SecretCardProps) {
  const plain = useContext(PlainOutput);
  const width = Math.max(secret.label.length, ...rows.map(([label]) => label.length));
  if (plain)
    return (
      <Text>
        {[
          title,
          ...rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`),
          `${secret.label}:`,
          secret.value,
          note,
        ].join('\n')}
      </Text>
    );
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="green" paddingX={1}>
      <Text bold>{title}</Text>
      <Text> </Text>
      {rows.map(([label, value]) => (
        <Text key={label}>
          <Text color="gray">{label.padEnd(width)}</Text> {value}
        </Text>
      ))}
      <Text>
        <Text color="gray">{secret.label.padEnd(width)}</Text>{' '}
        <Text bold color="green">
          {secret.value}
        </Text>
      </Text>
      <Text> </Text>
      <Text color="yellow">{note}</Text>
    </Box>
  );
}
