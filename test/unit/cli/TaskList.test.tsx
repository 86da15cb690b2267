import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { Table } from '../../../cli/components/Table.js';
import { TaskList } from '../../../cli/components/TaskList.js';

describe('TaskList', () => {
  it('shows each step with its state and detail', () => {
    const { lastFrame } = render(
      <TaskList
        tasks={[
          { title: 'Write configuration', state: 'done', detail: 'written' },
          { title: 'Apply database migrations', state: 'running' },
          { title: 'Create the first team', state: 'pending' },
        ]}
      />,
    );
    expect(lastFrame()).toBe('✔ Write configuration written\n◐ Apply database migrations\n○ Create the first team');
  });
});

describe('Table', () => {
  it('aligns columns and says when there is nothing', () => {
    expect(render(<Table columns={['ID', 'NAME']} rows={[['1', 'alpha'], ['22', 'b']]} />).lastFrame()).toBe('ID  NAME\n1   alpha\n22  b');
    expect(render(<Table columns={['ID']} rows={[]} empty="No keys." />).lastFrame()).toBe('No keys.');
  });
});
