import { render, renderToString } from 'ink';
import type { ReactElement } from 'react';
import { PlainOutput } from './plain-output.js';
import { Table, type TableProps } from '../components/Table.js';
import { TaskList, type TaskView } from '../components/TaskList.js';

export interface Task<T = unknown> {
  title: string;
  run: () => Promise<T>;
  /** A short note shown after the title once the task is done. */
  detail?: (result: T) => string | undefined;
  /** A result can still be a warning or a failure (a check that ran and found a problem). */
  state?: (result: T) => 'done' | 'warned' | 'failed' | 'skipped';
  /** What to do about it, shown under the title. */
  hint?: (result: T) => string | undefined;
}

/** Any task, whatever its result: the element type of a list of tasks with different results. */
export interface AnyTask {
  title: string;
  run: () => Promise<unknown>;
  detail?: (result: never) => string | undefined;
  state?: (result: never) => 'done' | 'warned' | 'failed' | 'skipped';
  hint?: (result: never) => string | undefined;
}

/** A task whose callbacks are typed by what `run` returns (an inline literal would leave them untyped). */
export const task = <T,>(spec: Task<T>): Task<T> => spec;

type ResultOf<T> = T extends Task<infer R> ? R : never;

/** Each task's result, in order; with `keepGoing`, a failed task's result is its Error. */
export type TaskResults<Ts extends readonly AnyTask[], Failure = never> = {
  -readonly [K in keyof Ts]: ResultOf<Ts[K]> | Failure;
};

/** Whether a stream gets plain lines: not a terminal (a pipe, a file, a log), so no frames and no colour. */
export const isPlain = (stream: NodeJS.WriteStream) => !stream.isTTY;

/**
 * Static output for tables and messages. On a terminal it fits the terminal's width; piped, it is
 * plain lines (components drop their frames: PlainOutput), unwrapped, so `grep` and `cut` see whole rows.
 */
async function renderOnce(element: ReactElement, stream: NodeJS.WriteStream): Promise<void> {
  const plain = isPlain(stream);
  const text = renderToString(<PlainOutput.Provider value={plain}>{element}</PlainOutput.Provider>, {
    columns: plain ? 10_000 : stream.columns,
  });
  stream.write(`${plain ? text.replace(/[ \t]+$/gm, '') : text}\n`);
}

/**
 * Runs steps in order with a live checklist on stderr, so stdout stays for data. Not on a
 * terminal (logs, cron) each finished step is one plain line; with `quiet` (--json) nothing is
 * drawn. Stops at the first failure and rethrows it; with `keepGoing` every step runs, and a
 * failed step's result is its Error.
 */
export async function renderTasks<const Ts extends readonly AnyTask[], KeepGoing extends boolean = false>(
  tasks: Ts,
  { quiet, keepGoing }: { quiet: boolean; keepGoing?: KeepGoing },
): Promise<TaskResults<Ts, KeepGoing extends true ? Error : never>> {
  const views: TaskView[] = tasks.map((t) => ({ title: t.title, state: 'pending' }));
  const live = !quiet && process.stderr.isTTY;
  const instance = live
    ? render(<TaskList tasks={views} />, { stdout: process.stderr, patchConsole: false, exitOnCtrlC: false })
    : null;
  const redraw = (index: number) => {
    if (instance) instance.rerender(<TaskList tasks={[...views]} />);
    else if (!quiet && views[index]!.state !== 'running')
      process.stderr.write(`${renderToString(<TaskList tasks={[views[index]!]} />, { columns: 10_000 })}\n`);
  };
  const results: unknown[] = [];
  try {
    // Each task's callbacks take what its own `run` returned.
    for (const [index, task] of (tasks as readonly Task[]).entries()) {
      views[index] = { ...views[index]!, state: 'running' };
      redraw(index);
      try {
        const result = await task.run();
        results.push(result);
        views[index] = {
          ...views[index],
          state: task.state?.(result) ?? 'done',
          detail: task.detail?.(result),
          hint: task.hint?.(result),
        };
      } catch (err) {
        views[index] = { ...views[index], state: 'failed', detail: keepGoing ? (err as Error).message : undefined };
        if (!keepGoing) throw err;
        results.push(err);
      } finally {
        redraw(index);
      }
    }
  } finally {
    instance?.unmount();
    await instance?.waitUntilExit();
  }
  return results as TaskResults<Ts, KeepGoing extends true ? Error : never>;
}

/** The width tables fit into: the terminal's, or none when piped (whole rows for `grep` and `cut`). */
export const terminalWidth = (stream: NodeJS.WriteStream = process.stdout) =>
  stream.isTTY ? stream.columns : undefined;

export const renderTable = (props: TableProps) =>
  renderOnce(<Table width={terminalWidth()} {...props} />, process.stdout);

export const renderElement = (element: ReactElement) => renderOnce(element, process.stdout);

export { printJson } from './text.js';
