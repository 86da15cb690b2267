import { type Command, Argument } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/completion.js'));

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description(
      'print a shell completion script: `source <(postlane completion bash)` (or zsh) in your shell rc, `postlane completion fish | source` for fish',
    )
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(action('completion'));
}
