import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMailbox } from '../../../server/mail/address.js';
import { readPreferenceToken } from '../../../server/services/preferences/preference-token.js';
import { eraseAddresses } from '../../../server/services/erasure/erase-addresses.js';
import { runPendingErasures } from '../../../server/services/erasure/run-pending-erasures.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

/**
 * Generated addresses are spread over every stored surface through the real API, the SDK and
 * the drain (capture stores their MIME), then erased three ways; a pg_dump of the database and
 * the process log written meanwhile must then hold none of them, in any form erasure promises.
 */
const log: string[] = [];

const app = useTestApp({
  jobs: 'worker',
  env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32', POSTLANE_LOG_LEVEL: 'info' },
  logDestination: { write: (line) => log.push(line) },
});

// Local parts start with letters beyond hex, so a survivor cannot be mistaken for an id.
const word = (min: number, max: number) => fc.stringMatching(new RegExp(`^[g-z][a-z0-9]{${min - 1},${max - 1}}$`));
const localPart = fc
  .tuple(
    word(4, 8),
    fc.option(fc.constantFrom('.', '_', '-', '')),
    fc.option(word(2, 5)),
    fc.option(fc.constantFrom('ö', 'é', 'ñ', 'ü')),
    fc.option(word(2, 6)),
  )
  .map(
    ([a, sep, b, intl, tag]) =>
      `${a}${sep !== null && b !== null ? `${sep}${b}` : ''}${intl ?? ''}${tag ? `+${tag}` : ''}`,
  );
const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$/);
const domain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'org', 'co.uk', 'example', 'io'))
  .map(([labels, tld]) => `${labels.join('.')}.${tld}`);
const address = fc
  .tuple(fc.mixedCase(localPart), fc.mixedCase(domain))
  .map(([local, host]) => `${local}@${host}`)
  .filter((a) => typeof parseMailbox(a) !== 'string');
const person = fc.record({ address, hasContact: fc.boolean() });

/** Where the test puts the addresses (each checked to hold one before erasure). */
const SPREAD = [
  'api_log.endpoint',
  'api_log.request_body',
  'api_log.response_body',
  'broadcast.html',
  'broadcast.reply_to',
  'broadcast.subject',
  'captured_message.envelope_to',
  'captured_message.raw',
  'captured_message.subject',
  'contact.last_name',
  'email.bcc',
  'email.cc',
  'email.headers',
  'email.html',
  'email.reply_to',
  'email.subject',
  'email.text',
  'email.to',
  'email_recipient.address',
  'event.payload',
  'idempotency_key.key',
  'segment.filter',
  'suppression.email',
  'tracking_click.link',
  'webhook_delivery.body',
];

/** COPY's text format, undone: the value as stored. */
const unescapeCopy = (field: string) =>
  field.replace(
    /\\(\\|n|r|t|b|f|v)/g,
    (_, c: string) => ({ '\\': '\\', n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v' })[c]!,
  );

const decodeBytes = (run: string, prefix: string) => {
  const bytes = Buffer.from(
    run
      .split(prefix)
      .slice(1)
      .map((h) => parseInt(h, 16)),
  );
  return bytes.toString('utf8');
};
/** Every view of a stored text under the encodings erasure covers, decoded independently of its code. */
function views(text: string): Record<string, string> {
  const percent = text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => decodeBytes(run, '%'));
  const json = text.replace(/\\+u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const html = text
    .replace(/&#(x?)([0-9a-f]+);/gi, (_, x: string, n: string) => String.fromCodePoint(parseInt(n, x ? 16 : 10)))
    .replace(/&commat;/g, '@')
    .replace(/&period;/g, '.');
  const qp = text.replace(/=\r?\n/g, '').replace(/(?:=[0-9a-f]{2})+/gi, (run) => decodeBytes(run, '='));
  const words = text.replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_, kind: string, body: string) =>
    kind.toLowerCase() === 'b'
      ? Buffer.from(body, 'base64').toString('utf8')
      : body.replace(/_/g, ' ').replace(/(?:=[0-9a-f]{2})+/gi, (run) => decodeBytes(run, '=')),
  );
  return {
    literal: text,
    percent,
    form: percent.replace(/\+/g, ' '),
    json,
    html,
    qp,
    'encoded-word': words,
    base64: text.replace(/\r?\n/g, ''),
  };
}

/** The base64 of an address at the three alignments a MIME body can put it, less the edge characters that depend on neighbours. */
function base64Forms(value: string): string[] {
  return [0, 1, 2].map((pad) => {
    const encoded = Buffer.concat([Buffer.alloc(pad), Buffer.from(value, 'utf8')]).toString('base64');
    const start = Math.ceil((pad * 4) / 3);
    return encoded.slice(start === 0 ? 0 : start + 1, -4);
  });
}

/** Where any of the values survives: `table.column (view)`, from a data-only dump. */
function survivors(dump: string, values: readonly string[]): string[] {
  const found = new Set<string>();
  let table: string | null = null;
  let columns: string[] = [];
  const lower = values.map((v) => v.toLowerCase());
  const spaced = values.filter((v) => v.includes('+')).map((v) => v.toLowerCase().replace(/\+/g, ' '));
  const b64 = values.flatMap((v) => [...base64Forms(v), ...base64Forms(v.toLowerCase())]).filter((f) => f.length >= 8);
  for (const line of dump.split('\n')) {
    const copy = /^COPY ([\w.]+) \((.*)\) FROM stdin;$/.exec(line);
    // A day partition's rows (email_p20261220, email_legacy, email_default) are its table's.
    if (copy)
      [table, columns] = [
        copy[1]!.replace(/^public\./, '').replace(/_(p\d{8}|legacy|default)$/, ''),
        copy[2]!.split(', ').map((c) => c.replace(/"/g, '')),
      ];
    else if (line === '\\.') table = null;
    else if (table) {
      line.split('\t').forEach((field, i) => {
        for (const [view, text] of Object.entries(views(unescapeCopy(field)))) {
          const hay = text.toLowerCase();
          const hit =
            view === 'base64'
              ? b64.some((f) => text.includes(f))
              : lower.some((v) => hay.includes(v)) || (view === 'form' && spaced.some((v) => hay.includes(v)));
          if (hit) found.add(`${table}.${columns[i]} (${view})`);
        }
      });
    }
  }
  return [...found].sort();
}

describe('erasure, property-based', () => {
  it('leaves no generated address in any encoding in the database or the process log', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(person, { minLength: 3, maxLength: 4, selector: (p) => p.address.toLowerCase() }),
        async (people) => {
          const { token, teamId } = await app.createTeamWithKey();
          const req = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
            app.request(method, path, { token, body, headers });
          const resend = app.sdk(token);
          expect((await req('POST', '/webhooks', { endpoint: 'http://127.0.0.1:9/hook', events: ['*'] })).status).toBe(
            201,
          );
          const segment = await req('POST', '/segments', {
            name: 'Picked',
            filter: { match: 'any', conditions: people.map((p) => ({ field: 'email', op: 'eq', value: p.address })) },
          });
          expect(segment.status).toBe(201);
          const sent: string[] = [];
          for (const [i, { address: addr, hasContact }] of people.entries()) {
            const encoded = encodeURIComponent(addr);
            if (hasContact) {
              expect((await req('POST', '/contacts', { email: addr, first_name: 'Pat' })).status).toBe(201);
              expect((await req('GET', `/contacts/${encoded}`)).status).toBe(200);
              expect((await req('PATCH', `/contacts/${addr}`, { last_name: 'Doe' })).status).toBe(200);
            } else {
              expect((await req('GET', `/contacts/${encoded}`)).status).toBe(404);
            }
            // Another contact that mentions the address.
            expect(
              (await req('POST', '/contacts', { email: `friend${i}@friends.test`, last_name: `via ${addr}` })).status,
            ).toBe(201);
            const others = people.filter((p) => p.address !== addr).map((p) => p.address);
            const { data, error } = await resend.emails.send(
              {
                from: 'Acme <hello@acme.test>',
                to: [`Pat Doe <${addr}>`],
                cc: others.slice(0, 1),
                bcc: others.slice(1, 2),
                replyTo: addr,
                subject: `Grüße an ${addr}`,
                html: `<p>Dear ${addr}, <a href="https://example.com/u?e=${encoded}&amp;x=1">unsubscribe</a> ${addr.replace('@', '&#64;')} ${'é'.repeat(40)} ${addr} <a href="{{{UNSUBSCRIBE_URL}}}">preferences</a></p>`,
                text: `Your address is ${addr}. ${'lorem ipsum '.repeat(6)}${addr} and "${addr.replace('@', '\\u0040')}"`,
                headers: { 'X-Customer': addr },
                attachments: [{ filename: 'card.txt', content: Buffer.from(`contact: ${addr}`).toString('base64') }],
              },
              { idempotencyKey: `welcome-${addr}` },
            );
            expect(error).toBeNull();
            sent.push(data!.id);
          }
          await until(async () => {
            const states = await Promise.all(
              sent.map(async (id) => (await req('GET', `/emails/${id}`)).body.last_event),
            );
            return states.every((state) => state === 'sent' || state === 'delivered');
          });
          const captured = await app.deps.orm.em
            .fork()
            .getConnection()
            .execute<{ n: string }[]>(
              `SELECT count(*) AS n FROM captured_message WHERE message_id IN (SELECT message_id FROM email WHERE team_id = ?)`,
              [teamId],
            );
          expect(Number(captured[0]!.n)).toBe(people.length);
          for (const { address: addr } of people)
            expect((await req('POST', '/suppressions', { email: addr })).status).toBe(201);
          expect(
            (
              await req('POST', '/broadcasts', {
                segment_id: segment.body.id,
                from: 'hello@acme.test',
                reply_to: people[0]!.address,
                subject: `For ${people[1]!.address}`,
                html: `<p>${people[2]!.address}</p>`,
              })
            ).status,
          ).toBe(201);
          await app.run(() =>
            app.deps.orm.em
              .getConnection()
              .execute(
                `INSERT INTO tracking_click (id, created_at, email_id, link, clicked_at, outcome) VALUES (gen_random_uuid(), now(), ?, ?, now(), 'clicked')`,
                [sent[0], `https://shop.example/account?email=${encodeURIComponent(people[0]!.address)}`],
              ),
          );

          const values = people.flatMap((p) => [p.address, p.address.split('@')[0]!]);
          const dump = () =>
            execFileSync('pg_dump', ['--data-only', app.databaseUrl], { maxBuffer: 256 * 1024 * 1024 }).toString(
              'utf8',
            );
          await app.deps.apiLogs.flush();
          // The search sees the address where it is before erasure, in MIME's encodings too.
          /** The addresses of the unsubscribe tokens in the dump that read as one of ours. */
          const tokens = (text: string) =>
            [...text.matchAll(/\/(?:preferences|unsubscribe)\/([A-Za-z0-9_-]{20,})/g)]
              .flatMap(([, token]) => readPreferenceToken(app.deps.secrets, token!)?.email ?? [])
              .filter((e) => values.includes(e) || people.some((p) => p.address.toLowerCase() === e));
          const full = dump();
          expect(tokens(full).length).toBeGreaterThan(0);
          const before = survivors(full, values);
          expect(SPREAD.filter((column) => !before.some((hit) => hit.startsWith(`${column} `)))).toEqual([]);
          expect(before).toContain('captured_message.raw (base64)');

          // Three ways in: a delete with erase (the path percent-encoded), a bulk remove with erase,
          // and the CLI's service, whose dry run must count exactly what the real run then changes.
          expect((await req('DELETE', `/contacts/${encodeURIComponent(people[0]!.address)}?erase=true`)).status).toBe(
            people[0]!.hasContact ? 200 : 404,
          );
          expect(
            (await req('POST', '/contacts/batch/remove', { emails: [people[1]!.address], erase: true })).status,
          ).toBe(200);
          // The rows of those two requests are written before the erasures run, as they are when an erasure job comes later.
          await app.deps.apiLogs.flush();
          const rest = people.slice(2).map((p) => p.address);
          const dry = await app.run(() => eraseAddresses(app.deps, teamId, rest, { dryRun: true }));
          const real = await app.run(() => eraseAddresses(app.deps, teamId, rest));
          expect(real).toEqual(dry);
          expect(real.emails).toBeGreaterThan(0);
          // A contact-less address has no erasure request from the API: the CLI way reaches it.
          const unreached = people
            .slice(0, 2)
            .filter((p) => !p.hasContact)
            .map((p) => p.address);
          await app.run(() => eraseAddresses(app.deps, teamId, unreached));
          await app.deps.apiLogs.flush();
          await app.run(() => runPendingErasures(app.deps));

          const after = dump();
          expect(survivors(after, values)).toEqual([]);
          expect(tokens(after)).toEqual([]);
          const logged = views(log.join(''));
          for (const [view, text] of Object.entries(logged)) {
            for (const value of values)
              expect([view, value, text.toLowerCase().includes(value.toLowerCase())]).toEqual([view, value, false]);
          }
        },
      ),
      { numRuns: 3, seed: 20261210, endOnFailure: true },
    );
  });
});
