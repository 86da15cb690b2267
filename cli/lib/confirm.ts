import { createInterface } from 'node:readline/promises';

/**
 * What cannot be undone is confirmed: a person at a terminal types yes (on stderr, so stdout stays
 * data); a script, with no terminal to ask on, must have passed --yes, else `withoutTerminal` is thrown.
 */
export async function confirmed(question: string, withoutTerminal: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new Error(withoutTerminal);
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${question} This cannot be undone. Type yes: `);
    return answer.trim().toLowerCase() === 'yes';
  } finally {
    prompt.close();
  }
}
