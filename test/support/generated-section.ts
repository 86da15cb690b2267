/**
 * `page` with the generated section `name` replaced by `content`: the lines between
 * `<!-- name:start … -->` and `<!-- name:end -->`, which the page must have.
 */
export function withSection(page: string, name: string, content: string): string {
  const startAt = page.indexOf(`<!-- ${name}:start`);
  const start = page.indexOf('-->', startAt) + '-->'.length;
  const end = page.indexOf(`<!-- ${name}:end -->`);
  if (startAt < 0 || end < start)
    throw new Error(`the page has no <!-- ${name}:start --> … <!-- ${name}:end --> section`);
  return `${page.slice(0, start)}\n\n${content}\n\n${page.slice(end)}`;
}
