import { Box, Text } from 'ink';

export type TaskState = 'pending' | 'running' | 'done' | 'failed';

export interface TaskView {
  title: string;
  state: TaskState;
  detail?: string;
}

const SYMBOL: Record<TaskState, { char: string; color: string }> = {
  pending: { char: '○', color: 'gray' },
  running: { char: '◐', color: 'yellow' },
  done: { char: '✔', color: 'green' },
  failed: { char: '✖', color: 'red' },
};

/** A checklist of steps with their state; purely presentational. */
export function TaskList({ tasks }: { tasks: TaskView[] }) {
  return (
    <Box flexDirection="column">
      {tasks.map((task, index) => (
        <Box key={index}>
          <Text color={SYMBOL[task.state].color}>{SYMBOL[task.state].char} </Text>
          <Text>{task.title}</Text>
          {task.detail ? <Text color="gray"> {task.detail}</Text> : null}
        </Box>
      ))}
    </Box>
  );
}
