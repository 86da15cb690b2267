import { Text } from 'ink';

const WIDTH = 30;

/** `label ██████░░░░ 12/40`; purely presentational. */
export function ProgressBar({ label, done, total }: { label: string; done: number; total: number }) {
  const filled = total === 0 ? WIDTH : Math.round((done / total) * WIDTH);
  return (
    <Text>
      {label} <Text color="cyan">{'█'.repeat(filled)}</Text>
      <Text color="gray">{'░'.repeat(WIDTH - filled)}</Text> {done}/{total}
    </Text>
  );
}
