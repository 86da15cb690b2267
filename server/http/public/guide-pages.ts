import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { Marked, type Tokens } from 'marked';

/** The groups of the guide's navigation, in reading order: from the first install to the references. */
export const GUIDE_GROUPS = ['Start', 'Send', 'Audience', 'Receive', 'Operate', 'Reference'] as const;
type GuideGroup = (typeof GUIDE_GROUPS)[number];

/** The pages of docs/, by group in reading order; only these are served, and the README's table of contents lists them. */
export const GUIDE_PAGES: readonly {
  slug: string;
  title: string;
  group: GuideGroup;
  /** What the page covers, for the README's table of contents. */
  summary: string;
  file?: string;
}[] = [
  {
    slug: 'install',
    title: 'Install and upgrade',
    group: 'Start',
    summary: '`install.sh` step by step, the service, the config file, upgrades',
  },
  {
    slug: 'production',
    title: 'Production',
    group: 'Start',
    summary:
      'the checklist to production: sizing, TLS (nginx, Caddy), ports, DNS, secrets, monitoring, backups, upgrades, the first week',
  },
  {
    slug: 'sending',
    title: 'Sending email',
    group: 'Send',
    summary: "the official SDK's field names, `POST /emails` and `/emails/batch`, scheduling, idempotency",
  },
  {
    slug: 'api',
    title: 'The HTTP API',
    group: 'Send',
    summary:
      'the routes, request body rules, the API reference at `/docs`, API logs, attachments and received mail with their download URLs',
  },
  {
    slug: 'smtp',
    title: 'Sending with SMTP',
    group: 'Send',
    summary:
      'the SMTP submission listener: ports, username and API key, Postfix/msmtp/nodemailer/smtplib, SMTP replies and API errors',
  },
  {
    slug: 'templates',
    title: 'Templates and broadcasts',
    group: 'Send',
    summary: 'stored templates, broadcasts to a segment',
  },
  {
    slug: 'domains',
    title: 'Domains and DNS',
    group: 'Send',
    summary: 'the records to publish, statuses, checks, who may send what',
  },
  {
    slug: 'deliverability',
    title: 'Tracking and deliverability',
    group: 'Send',
    summary: 'open and click tracking, machine detection, bounce and complaint rates, pauses, the suppression list',
  },
  {
    slug: 'providers',
    title: 'Providers: SMTP, SES, capture',
    group: 'Send',
    summary:
      'SMTP, Amazon SES, capture: options, SES setup, bounces from SMTP relays, VERP return paths (bounce domain)',
  },
  {
    slug: 'direct-delivery',
    title: 'Direct delivery (preview)',
    group: 'Send',
    summary:
      'delivering to recipients’ mail servers without a relay: traffic shaping per IP and MX group, back-off, MTA-STS, bounce classes',
  },
  {
    slug: 'audience',
    title: 'Audience: contacts, segments, topics and the preference page',
    group: 'Audience',
    summary: 'contacts, segments, topics, imports, the hosted preference page and one-click unsubscribe',
  },
  {
    slug: 'automations',
    title: 'Automations and custom events',
    group: 'Audience',
    summary: "Resend's automations and custom events: the steps, field paths, what runs once, limits, a worked example",
  },
  {
    slug: 'erasure',
    title: 'Erasure and privacy',
    group: 'Audience',
    summary: 'erasing addresses (GDPR), what is kept where',
  },
  {
    slug: 'receiving',
    title: 'Receiving mail',
    group: 'Receive',
    summary: 'the inbound SMTP listener: MX record, port 25, TLS, limits, retention',
  },
  {
    slug: 'webhooks',
    title: 'Webhooks',
    group: 'Receive',
    summary: 'signing, rotation, retries, disabling, SSRF defence',
  },
  {
    slug: 'operations',
    title: 'Operations',
    group: 'Operate',
    summary: 'processes, scale-out, memory, database outages, metrics, alerts, maintenance, backups, day two',
  },
  {
    slug: 'guarantees',
    title: 'Delivery guarantees',
    group: 'Operate',
    summary: 'at-least-once sending, what happens on faults',
  },
  {
    slug: 'security',
    title: 'Security',
    group: 'Operate',
    summary: "API keys, scopes, logs, the limits on received mail, the service's hardening, ingestion webhooks",
  },
  {
    slug: 'quotas',
    title: 'Plans, quotas and rate limits',
    group: 'Operate',
    summary: 'cloud mode, plans, quotas, rate limits',
  },
  {
    slug: 'capacity',
    title: 'Capacity and sizing',
    group: 'Operate',
    summary: 'what one core carries, sizing for 1M – 100M emails a day, what grows, the multi-host topology',
  },
  {
    slug: 'benchmarks',
    title: 'Benchmarks',
    group: 'Operate',
    summary: 'how fast, measured against a baseline in the same run',
  },
  {
    slug: 'configuration',
    title: 'Configuration reference',
    group: 'Reference',
    summary: 'every setting: default, range, meaning (generated from the schema)',
  },
  {
    slug: 'cli',
    title: 'CLI reference',
    group: 'Reference',
    summary: 'every command and option (generated from the program)',
  },
  {
    slug: 'development',
    title: 'Development',
    group: 'Reference',
    summary: 'building, testing, the fresh-box test, schema changes, the layout of the code',
  },
  {
    slug: 'contributing',
    title: 'Contributing',
    group: 'Reference',
    file: 'CONTRIBUTING.md',
    summary: 'how changes are made and reviewed',
  },
  {
    slug: 'security-reports',
    title: 'Reporting a vulnerability',
    group: 'Reference',
    file: 'SECURITY.md',
    summary: 'how to report a vulnerability privately',
  },
];

const SLUGS = new Set(GUIDE_PAGES.map((page) => page.slug));
/** The README's table of contents (`npm run docs` writes it): every page, in the guide's order. */
export const guideTable = () =>
  [
    '| Page | What it covers |',
    '| --- | --- |',
    ...GUIDE_PAGES.map((page) => `| [${page.title}](docs/${guideFile(page)}) | ${page.summary} |`),
  ].join('\n');

/** The file each page is read from: `<slug>.md` unless it says otherwise. */
export const guideFile = (page: { slug: string; file?: string }) => page.file ?? `${page.slug}.md`;
const SLUG_OF_FILE = new Map(GUIDE_PAGES.map((page) => [guideFile(page), page.slug]));

const linkTo = (page: { slug: string; title: string }) => `<a href="/docs/guide/${page.slug}">${page.title}</a>`;
const pagesOf = (group: GuideGroup) => GUIDE_PAGES.filter((page) => page.group === group);

/** The links to every page by group on one line each, for the navigation of the API reference. */
export const GUIDE_LINKS = GUIDE_GROUPS.map(
  (group) => `<b>${group}</b> ${pagesOf(group).map(linkTo).join(' · ')}`,
).join(' &nbsp; ');

/** The guide's own navigation and its landing page's contents: each group with its pages. */
const groupedLinks = (current?: string) =>
  GUIDE_GROUPS.map(
    (group) =>
      `<section><h2>${group}</h2><ul>${pagesOf(group)
        .map((page) => `<li${page.slug === current ? ' aria-current="page"' : ''}>${linkTo(page)}</li>`)
        .join('')}</ul></section>`,
  ).join('\n');

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

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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
    // A narrow table breaks a long setting name at its underscores before anywhere else.
    codespan({ text }) {
      return `<code>${escapeHtml(text).replaceAll('_', '_<wbr>')}</code>`;
    },
  },
});

function page(title: string, body: string, current?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Postlane</title>
<style>
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1f2328; }
.layout { display: grid; grid-template-columns: 15rem minmax(0, 1fr); gap: 2rem; max-width: 78rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
nav { font-size: 0.9rem; position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto; padding-top: 0.5rem; }
nav h2 { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.05em; color: #59636e; margin: 1rem 0 0.25rem; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav li { margin: 0.15rem 0; }
nav [aria-current] a { font-weight: 600; color: #1f2328; }
main { min-width: 0; overflow-wrap: break-word; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }
code { font: 0.9em ui-monospace, monospace; }
/* Tables wrap rather than cut: long names and values break inside their cells. */
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; vertical-align: top; overflow-wrap: anywhere; }
td code, th code { white-space: normal; overflow-wrap: anywhere; }
/* A name in the first column breaks at its underscores (<wbr>), never inside a word. */
td:first-child code { overflow-wrap: break-word; }
.landing section { margin-bottom: 1rem; }
@media (max-width: 50rem) {
  .layout { display: block; padding: 0.75rem 1rem 3rem; }
  nav { position: static; max-height: none; border-bottom: 1px solid #d0d7de; padding-bottom: 0.75rem; }
  nav section { display: flex; flex-wrap: wrap; gap: 0 0.75rem; align-items: baseline; }
  nav h2 { margin: 0.4rem 0 0; flex-basis: 100%; }
  nav ul { display: flex; flex-wrap: wrap; gap: 0 0.75rem; }
  table { font-size: 0.85rem; }
  th, td { padding: 0.25rem 0.35rem; }
}
</style>
</head>
<body>
<div class="layout">
<nav aria-label="Guide"><a href="/docs/guide">Guide</a> · <a href="/docs">API reference</a>
${groupedLinks(current)}
</nav>
<main>
${body}</main>
</div>
</body>
</html>
`;
}

/** The landing page of /docs/guide: where to start, and every page by group. */
const LANDING = page(
  'Guide',
  `<h1 id="postlane-guide">Postlane guide</h1>
<p>The appliance's own documentation. New here? Start with <a href="/docs/guide/install">Install and upgrade</a>, then <a href="/docs/guide/production">Production</a> before real mail goes out. The HTTP API is described request by request in the <a href="/docs">API reference</a>.</p>
<div class="landing">
${groupedLinks()}
</div>
`,
);

const NOT_FOUND = page(
  'Page not found',
  `<h1 id="page-not-found">Page not found</h1>
<p>The guide has no such page. Its pages are listed in the navigation and on the <a href="/docs/guide">guide's first page</a>.</p>
`,
);

/**
 * GET /docs/guide/<page>: the docs/ pages rendered to HTML, for people reading the appliance's own
 * documentation, with /docs/guide as their landing page and the files of docs/deploy/ beside them. No API key.
 */
export function guidePages(dir = docsDir()): Middleware {
  const cache = new Map<string, string>();
  // The shipped deployment files the pages link to (`deploy/nginx.conf`), served as they are.
  const deployFiles = new Set(existsSync(join(dir, 'deploy')) ? readdirSync(join(dir, 'deploy')) : []);
  return async function guidePages(ctx, next) {
    const inGuide = ctx.path === '/docs/guide' || ctx.path.startsWith('/docs/guide/');
    if (!inGuide || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    const deployFile = /^\/docs\/guide\/deploy\/([\w.-]+)$/.exec(ctx.path)?.[1];
    if (deployFile !== undefined && deployFiles.has(deployFile)) {
      ctx.set('cache-control', 'no-cache');
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = readFileSync(join(dir, 'deploy', deployFile), 'utf8');
      return;
    }
    const slug = /^\/docs\/guide\/([a-z-]+)\/?$/.exec(ctx.path)?.[1];
    if (slug !== undefined && SLUGS.has(slug) && !cache.has(slug)) {
      const meta = GUIDE_PAGES.find((p) => p.slug === slug)!;
      const html = await markdown.parse(readFileSync(join(dir, guideFile(meta)), 'utf8'));
      cache.set(slug, page(meta.title, html, slug));
    }
    ctx.set('content-security-policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
    ctx.set('cache-control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    // An unknown page is a page too, for the person who followed a stale link: never the API's JSON.
    if (ctx.path === '/docs/guide' || ctx.path === '/docs/guide/') ctx.body = LANDING;
    else if (slug !== undefined && SLUGS.has(slug)) ctx.body = cache.get(slug);
    else {
      ctx.status = 404;
      ctx.body = NOT_FOUND;
    }
  };
}
