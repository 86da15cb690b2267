import { Box, Text } from 'ink';

export type TaskState = 'pending' | 'running' | 'done' | 'warned' | 'failed' | 'skipped';

export interface TaskView {
  title: string;
  state: TaskState;
  detail?: string;
  /** What to do about a warning or failure, on a line of its own. */
  hint?: string;
}

const SYMBOL: Record<TaskState, { char: string; color: string }> = {
  pending: { char: '○', color: 'gray' },
  running: { char: '◐', color: 'yellow' },
  done: { char: '✔', color: 'green' },
  warned: { char: '⚠', color: 'yellow' },
  failed: { char: '✖', color: 'red' },
  skipped: { char: '–', color: 'gray' },
};

/** A checklist of steps with their state; purely presentational. */
export function TaskList({ tasks }: { tasks: TaskView[] }) {
  return (
    <Box flexDirection="column">
      {tasks.map((task, index) => (
        <Box key={index} flexDirection="column">
          {/* A hanging indent: a narrow terminal wraps the words under the title, never to column 0. */}
          <Box>
            <Box width={2} flexShrink={0}>
              <Text color={SYMBOL[task.state].color}>{SYMBOL[task.state].char}</Text>
            </Box>
            <Text>
              {task.title}
              {task.detail ? <Text color="gray"> {task.detail}</Text> : null}
            </Text>
          </Box>
          {task.hint ? (
            <Box paddingLeft={2}>
              <Box width={2} flexShrink={0}>
                <Text color={SYMBOL[task.state].color}>→</Text>
              </Box>
              <Text color={SYMBOL[task.state].color}>{task.hint}</Text>
            </Box>
          ) : null}
        </Box>
      ))}
    </Box>
  );
}
