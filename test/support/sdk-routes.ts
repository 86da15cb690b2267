import { Resend } from 'resend';

/** One HTTP route the official SDK can call: `{id}` where it puts an id. */
export interface SdkRoute {
  method: string;
  template: string;
  /** The SDK method that calls it, such as `emails.metrics`. */
  call: string;
}

const ID = '0d3a5f8e-4c1b-4e7a-9f2d-6b8c1e0a7d54';
const SKIP = new Set(['constructor', 'resend']);

/** Option names the SDK reads ids from, for a payload it spreads or destructures. */
const ID_KEYS = [
  'id',
  'emailId',
  'automationId',
  'runId',
  'webhookId',
  'eventId',
  'domainId',
  'contactId',
  'segmentId',
  'audienceId',
  'topicId',
  'attachmentId',
  'inboxId',
  'threadId',
  'messageId',
  'labelId',
  'broadcastId',
  'templateId',
  'importId',
  'grantId',
  'email',
];

/** A payload whose every field is an id, enough for each SDK method to build its URL. */
function anything(): unknown {
  const target = Object.fromEntries(ID_KEYS.map((key) => [key, ID]));
  return new Proxy(target, {
    get: (_target, key) => {
      if (typeof key === 'symbol' || key === 'then' || key === 'toJSON' || key === 'react') return undefined;
      return ID_KEYS.includes(key) || key.endsWith('Id') ? ID : undefined;
    },
  });
}

/**
 * Every route template of the installed `resend` SDK: each method of each resource is called
 * (ids everywhere, with an object argument and with a string one) while `fetch` records what it
 * asks for and answers `{}`; the id becomes `{id}` and the query string goes.
 */
export async function sdkRoutes(): Promise<SdkRoute[]> {
  const seen = new Map<string, SdkRoute>();
  const realFetch = globalThis.fetch;
  let current = '';
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const template = decodeURIComponent(url.pathname).split(ID).join('{id}');
    const key = `${method} ${template}`;
    // A call shape the method does not take leaves a hole in the path: not a route.
    if (!/undefined|null|\[object /.test(template) && !seen.has(key))
      seen.set(key, { method, template, call: current });
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  try {
    const resend = new Resend('re_enumerate_routes', { baseUrl: 'http://sdk.invalid' } as never);
    const walk = async (object: object, path: string, depth: number) => {
      if (depth > 3) return;
      const names = new Set<string>();
      for (let proto = object; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
        for (const name of Object.getOwnPropertyNames(proto)) names.add(name);
      for (const name of [...names].sort()) {
        if (SKIP.has(name) || name.startsWith('_')) continue;
        const value = (object as Record<string, unknown>)[name];
        if (typeof value === 'function') {
          current = `${path}${name}`;
          if (depth === 0) continue; // the client's own get/post/fetchRequest
          for (const args of [
            [anything(), {}],
            [ID, anything(), {}],
            [ID, {}],
            [ID, ID, anything(), {}],
            [ID, ID, {}],
            [{}],
            [],
          ]) {
            try {
              await (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
            } catch {
              // A shape this method refuses: the others cover it.
            }
          }
        } else if (value && typeof value === 'object' && !Array.isArray(value)) {
          await walk(value, `${path}${name}.`, depth + 1);
        }
      }
    };
    await walk(resend, '', 0);
  } finally {
    globalThis.fetch = realFetch;
  }
  return [...seen.values()].sort((a, b) => a.template.localeCompare(b.template) || a.method.localeCompare(b.method));
}

/**
 * SDK routes Postlane does not serve, and why. Keep it short and explicit: the route test fails on
 * an entry that has come to be served, so whoever builds one removes its entry.
 */
export const UNSERVED: readonly { pattern: RegExp; reason: string }[] = [
  {
    pattern: /^[A-Z]+ \/inboxes(\/|$)/,
    reason: 'Inboxes: the shared inboxes of a hosted help desk, not part of a sending appliance',
  },
];

export const unservedReason = (route: Pick<SdkRoute, 'method' | 'template'>) =>
  UNSERVED.find((u) => u.pattern.test(`${route.method} ${route.template}`))?.reason;

/** The route template of ours (`/emails/:id`) that serves an SDK template (`/emails/{id}`) for its method. */
export function servingTemplate(
  route: Pick<SdkRoute, 'method' | 'template'>,
  ours: readonly { spec: { method: string; path: string } }[],
): string | undefined {
  const wanted = route.template.split('/');
  const matches = ours.filter((r) => {
    if (r.spec.method.toUpperCase() !== route.method) return false;
    const have = r.spec.path.split('/');
    return (
      have.length === wanted.length &&
      have.every((s, i) => (s.startsWith(':') ? wanted[i] === '{id}' : s === wanted[i]))
    );
  });
  return matches[0]?.spec.path;
}

/** The markdown table of docs/api.md: every SDK route and its state here. */
export async function sdkRouteTable(ours: readonly { spec: { method: string; path: string } }[]): Promise<string> {
  const routes = await sdkRoutes();
  const served = routes.filter((r) => servingTemplate(r, ours)).length;
  const lines = [
    `The \`resend\` SDK's ${routes.length} routes (read from the installed package); ${served} served here.`,
    '',
    '| Route | SDK method | In Postlane |',
    '|---|---|---|',
    ...routes.map((route) => {
      const state = servingTemplate(route, ours) ? 'served' : `not served: ${unservedReason(route) ?? 'missing'}`;
      return `| \`${route.method} ${route.template}\` | \`${route.call}\` | ${state} |`;
    }),
  ];
  return lines.join('\n');
}
