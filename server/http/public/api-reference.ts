import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Middleware } from 'koa';
import { GUIDE_LINKS } from './guide-pages.js';

const ASSETS_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// The page loads only our own files: no CDN, and a policy that allows nothing else.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Postlane API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<nav style="font: 14px/1.6 sans-serif; padding: 0.5rem 1.25rem; border-bottom: 1px solid #ddd"><a href="/docs/guide">Guide</a>: ${GUIDE_LINKS}</nav>
<div id="reference"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0, tryItOutEnabled: false });\n`;

const FILES: Record<string, { type: string; body: () => string | Buffer }> = {
  '/docs': { type: 'text/html; charset=utf-8', body: () => PAGE },
  '/docs/init.js': { type: 'text/javascript; charset=utf-8', body: () => INIT },
  '/docs/swagger-ui.css': {
    type: 'text/css; charset=utf-8',
    body: () => readFileSync(join(ASSETS_DIR, 'swagger-ui.css')),
  },
  '/docs/swagger-ui-bundle.js': {
    type: 'text/javascript; charset=utf-8',
    body: () => readFileSync(join(ASSETS_DIR, 'swagger-ui-bundle.js')),
  },
};

/** GET /docs: a readable reference of /openapi.json, rendered by Swagger UI shipped with the package. No API key. */
export function apiReference(): Middleware {
  const cache = new Map<string, string | Buffer>();
  return async function apiReference(ctx, next) {
    const path = ctx.path.length > 1 ? ctx.path.replace(/\/$/, '') : ctx.path;
    const file = FILES[path];
    if (!file || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    if (!cache.has(path)) cache.set(path, file.body());
    ctx.set(
      'content-security-policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    );
    ctx.set('cache-control', path === '/docs' ? 'no-cache' : 'public, max-age=86400');
    ctx.type = file.type;
    ctx.body = cache.get(path);
  };
}
