import type { Command } from 'commander';
import { type CompletionShell, completionScript } from '../services/completion.js';

export async function completion(shell: CompletionShell, _options: unknown, cmd: Command): Promise<void> {
  // The tree this command hangs in: the whole program, as the user's shell will run it.
  let program = cmd;
  while (program.parent) program = program.parent;
  process.stdout.write(completionScript(program, shell));
}
