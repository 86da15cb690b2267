import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { Marked, type Tokens } from 'marked';

/** The pages of docs/, in the order of the README's table of contents; only these are served. */
export const GUIDE_PAGES: readonly { slug: string; title: string; file?: string }[] = [
  { slug: 'install', title: 'Install and upgrade' },
  { slug: 'production', title: 'Production' },
  { slug: 'configuration', title: 'Configuration reference' },
  { slug: 'sending', title: 'Sending email' },
  { slug: 'api', title: 'The HTTP API' },
  { slug: 'audience', title: 'Audience: contacts, segments, topics and the preference page' },
  { slug: 'templates', title: 'Templates and broadcasts' },
  { slug: 'automations', title: 'Automations and custom events' },
  { slug: 'domains', title: 'Domains and DNS' },
  { slug: 'webhooks', title: 'Webhooks' },
  { slug: 'receiving', title: 'Receiving mail' },
  { slug: 'deliverability', title: 'Tracking and deliverability' },
  { slug: 'providers', title: 'Providers: SMTP, SES, capture' },
  { slug: 'quotas', title: 'Plans, quotas and rate limits' },
  { slug: 'erasure', title: 'Erasure and privacy' },
  { slug: 'operations', title: 'Operations' },
  { slug: 'guarantees', title: 'Delivery guarantees' },
  { slug: 'security', title: 'Security' },
  { slug: 'cli', title: 'CLI reference' },
  { slug: 'benchmarks', title: 'Benchmarks' },
  { slug: 'capacity', title: 'Capacity and sizing' },
  { slug: 'development', title: 'Development' },
  { slug: 'contributing', title: 'Contributing', file: 'CONTRIBUTING.md' },
  { slug: 'security-reports', title: 'Reporting a vulnerability', file: 'SECURITY.md' },
];

const SLUGS = new Set(GUIDE_PAGES.map((page) => page.slug));
/** The file each page is read from: `<slug>.md` unless it says otherwise. */
export const guideFile = (page: { slug: string; file?: string }) => page.file ?? `${page.slug}.md`;
const SLUG_OF_FILE = new Map(GUIDE_PAGES.map((page) => [guideFile(page), page.slug]));

/** The links to every page, for the navigation of these pages and of the API reference. */
export const GUIDE_LINKS = GUIDE_PAGES.map((page) => `<a href="/docs/guide/${page.slug}">${page.title}</a>`).join(
  ' · ',
);

/** docs/ beside package.json: this file runs from server/… under vitest and from dist/server/… in production. */
export function docsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return join(dir, 'docs');
}

/** GitHub's heading anchors, so links written for the repository (`providers.md#amazon-ses`) work here too. */
function anchor(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

const markdown = new Marked({
  walkTokens(token) {
    // A link to a sibling page (`domains.md#records`) becomes its URL here.
    if (token.type !== 'link') return;
    const link = /^([A-Za-z-]+\.md)(#.*)?$/.exec((token as Tokens.Link).href);
    const slug = link && SLUG_OF_FILE.get(link[1]!);
    if (slug) (token as Tokens.Link).href = `/docs/guide/${slug}${link[2] ?? ''}`;
  },
  renderer: {
    heading({ tokens, depth, text }) {
      return `<h${depth} id="${anchor(text)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
  },
});

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Postlane</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 0 auto; padding: 1rem 2rem 4rem; color: #1f2328; }
nav { font-size: 0.9rem; margin-bottom: 1rem; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }
code { font: 0.9em ui-monospace, monospace; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; vertical-align: top; }
</style>
</head>
<body>
<nav><a href="/docs">API reference</a> · ${GUIDE_LINKS}</nav>
<main>
${body}</main>
</body>
</html>
`;
}

/** GET /docs/guide/<page>: the docs/ pages rendered to HTML, for people reading the appliance's own documentation. No API key. */
export function guidePages(dir = docsDir()): Middleware {
  const cache = new Map<string, string>();
  return async function guidePages(ctx, next) {
    const slug = /^\/docs\/guide\/([a-z-]+)\/?$/.exec(ctx.path)?.[1];
    if (slug === undefined || !SLUGS.has(slug) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    if (!cache.has(slug)) {
      const meta = GUIDE_PAGES.find((p) => p.slug === slug)!;
      cache.set(slug, page(meta.title, await markdown.parse(readFileSync(join(dir, guideFile(meta)), 'utf8'))));
    }
    ctx.set('content-security-policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
    ctx.set('cache-control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = cache.get(slug);
  };
}
