import { createProgram } from '../program.js';
import { type CompletionShell, completionScript } from '../services/completion.js';

export async function completion(shell: CompletionShell): Promise<void> {
  process.stdout.write(completionScript(createProgram(), shell));
}
