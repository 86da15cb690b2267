import { Box, Text } from 'ink';

export interface SecretCardProps {
  title: string;
  rows: [label: string, value: string][];
  /** The value to copy now: shown once, highlighted. */
  secret: { label: string; value: string };
  note: string;
}

/** A framed card for a secret shown once (a rotated webhook signing secret). */
export function SecretCard({ title, rows, secret, note }: SecretCardProps) {
  const width = Math.max(secret.label.length, ...rows.map(([label]) => label.length));
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
