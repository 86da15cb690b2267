import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A real terminal: a detached tmux session running bash, typed into with send-keys and read back
 * with capture-pane, as a person at a console would see it.
 */
export function openTerminal(env: Record<string, string>, { columns = 200, rows = 60 } = {}) {
  const session = `postlane-journey-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', session, '-x', String(columns), '-y', String(rows), 'bash --norc --noprofile');
  tmux('set-option', '-t', session, 'history-limit', '10000');
  // Exported in the shell itself: a tmux server started earlier would override `new-session -e` for PATH.
  tmux(
    'send-keys',
    '-t',
    session,
    '-l',
    Object.entries(env)
      .map(([k, v]) => `export ${k}='${v}'`)
      .join('; '),
  );
  tmux('send-keys', '-t', session, 'Enter');
  let step = 0;
  const transcript: string[] = [];
  const screen = () => tmux('capture-pane', '-p', '-J', '-t', session, '-S', '-10000');
  return {
    screen,
    /** Types a command (then `answer`, a line typed ahead for a prompt) and waits for it to finish; returns what it printed and its exit code. */
    async run(command: string, timeoutMs = 60_000, answer?: string): Promise<{ output: string; code: number }> {
      step += 1;
      const marker = `__done_${step}__`;
      const then = command.trimEnd().endsWith('&') ? ' ' : '; ';
      tmux('send-keys', '-t', session, '-l', `clear; tmux clear-history; ${command}${then}echo ${marker} $?`);
      tmux('send-keys', '-t', session, 'Enter');
      if (answer !== undefined) tmux('send-keys', '-t', session, '-l', answer);
      if (answer !== undefined) tmux('send-keys', '-t', session, 'Enter');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        const done = new RegExp(`^${marker} (\\d+)$`, 'm').exec(text);
        if (done) {
          const output = text
            .slice(0, done.index)
            .replace(/^.*__done_\d+__ \$\?\n/s, '')
            .trim();
          transcript.push(`$ ${command}\n${output}\n[exit ${done[1]}]`);
          return { output, code: Number(done[1]) };
        }
        if (Date.now() > deadline) throw new Error(`"${command}" did not finish; the screen shows:\n${text}`);
        await sleep(100);
      }
    },
    /** Every command typed and what the screen showed, in order. */
    transcript: () => transcript.join('\n\n'),
    close() {
      tmux('kill-session', '-t', session);
    },
  };
}
