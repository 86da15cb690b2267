// Plain text for the terminal, without Ink: a failure is told before Ink (a second on a busy machine) loads.

/**
 * Where a word longer than its line is cut: after the last separator that fits (a setting name at an
 * underscore, an address at a dot) if that fills half the line at least, else at the width.
 */
function cutAt(word: string, width: number): number {
  const separator = Math.max(...['_', '-', '.', '/', '@', ','].map((char) => word.lastIndexOf(char, width - 1)));
  return separator + 1 >= width / 2 ? separator + 1 : width;
}

/** Word-wrapped lines of at most `width` characters; a word longer than that is cut. */
export function wrapCell(cell: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of cell.split(' ')) {
    const candidate = line ? `${line} ${word}` : word;
    if (candidate.length <= width) {
      line = candidate;
      continue;
    }
    if (line) lines.push(line);
    let rest = word;
    while (rest.length > width) {
      const at = cutAt(rest, width);
      lines.push(rest.slice(0, at));
      rest = rest.slice(at);
    }
    line = rest;
  }
  lines.push(line);
  return lines;
}

/** Colour codes only for a terminal, and never under NO_COLOR. */
const colour = (stream: NodeJS.WriteStream, code: string, text: string) =>
  stream.isTTY && !process.env.NO_COLOR ? `\x1b[${code}m${text}\x1b[0m` : text;

/** A failure and, where we know one, what to do about it, on stderr: each problem wrapped under its dash on a terminal. */
export function printProblems(title: string, problems: string[], hint?: string): void {
  const stream = process.stderr;
  const width = stream.isTTY ? stream.columns : undefined;
  const wrapped = (text: string, indent: string) =>
    width === undefined ? [text] : wrapCell(text, Math.max(20, width - indent.length));
  const lines = [
    colour(stream, '1;31', `✖ ${title}`),
    ...problems.flatMap((problem) => wrapped(problem, '   ').map((line, at) => `${at === 0 ? ' - ' : '   '}${line}`)),
    ...(hint ? wrapped(hint, '').map((line) => colour(stream, '90', line)) : []),
  ];
  stream.write(`${lines.join('\n')}\n`);
}

export function printJson(data: unknown): void {
  process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
}

/** An ISO time as a table shows it: `2026-11-27 04:15:02`; `-` for none. */
export const shortTime = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, '') : '-');
