import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runPostlane } from '../../support/postlane-process.js';

/** What bash offers after `words` (the last one is the word being completed). */
const complete = (script: string, words: string[]) =>
  execFileSync(
    'bash',
    [
      '-c',
      `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _postlane; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');

describe('postlane completion', () => {
  it('bash completes commands, subcommands and options from the command tree, past option values', async () => {
    const result = await runPostlane(['completion', 'bash'], {});
    expect(result.code, result.output).toBe(0);
    const script = result.stdout;
    expect(complete(script, ['postlane', 'do'])).toEqual(['domains', 'doctor']);
    expect(complete(script, ['postlane', 'webhooks', ''])).toEqual(expect.arrayContaining(['list', 'rotate']));
    expect(complete(script, ['postlane', 'emails', 'list', '--team', 'Beta', '--st'])).toEqual(['--status']);
    expect(complete(script, ['postlane', 'config', ''])).toEqual(['check', 'show', '--help']);
  });

  it('zsh and fish scripts name the same commands; another shell is refused', async () => {
    const zsh = await runPostlane(['completion', 'zsh'], {});
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('"emails list") words="');
    const fish = await runPostlane(['completion', 'fish'], {});
    expect(fish.stdout).toContain("complete -c postlane -n '__fish_use_subcommand' -a 'install serve");
    expect(fish.stdout).toContain(
      "-n '__fish_seen_subcommand_from emails; and not __fish_seen_subcommand_from list show retry cancel'",
    );
    const other = await runPostlane(['completion', 'tcsh'], {});
    expect(other.code).not.toBe(0);
    expect(other.output).toContain('Allowed choices are bash, zsh, fish');
  });
});
