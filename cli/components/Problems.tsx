import { Box, Text } from 'ink';

/** A failure and, where we know one, what to do about it. */
export function Problems({ title, problems, hint }: { title: string; problems: string[]; hint?: string }) {
  return (
    <Box flexDirection="column">
      <Text color="red" bold>
        ✖ {title}
      </Text>
      {problems.map((problem, index) => (
        <Text key={index}> - {problem}</Text>
      ))}
      {hint ? <Text color="gray">{hint}</Text> : null}
    </Box>
  );
}
