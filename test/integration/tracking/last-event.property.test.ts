import { describe, expect, it } from 'vitest';
import { Email, type IEmail } from '../../../server/entities/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { recordClick, recordOpen } from '../../../server/services/tracking/record-tracking.js';
import { useTestApp } from '../../support/test-app.js';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const LINKS = ['https://shop.example/a', 'https://shop.example/b', 'https://shop.example/c'];
type Op = 0 | 1 | 2 | 'open';

const app = useTestApp();

const sql = async <T>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);

/**
 * Every sequence of `length` requests, each a click on one of the three links or the pixel, up to
 * renaming the links (they are alike): a link is first clicked in order 0, 1, 2.
 */
const sequences = (length: number): Op[][] =>
  length === 0
    ? [[]]
    : sequences(length - 1).flatMap((s) => {
        const next = new Set(s.filter((op) => op !== 'open')).size;
        return ([...LINKS.keys(), 'open'] as Op[]).filter((op) => op === 'open' || op <= next).map((op) => [...s, op]);
      });

/**
 * What docs/deliverability.md promises, all requests being within one second of each other: the click that
 * completes the burst (the third distinct link) and every click after it are a scanner's, and the
 * clicks before it are retracted; opens from the pixel stand. `last_event` is the newest standing
 * event, else what stood before (`sent`); an open stands when the pixel or a standing click brought one.
 */
function model(ops: readonly Op[]) {
  const links = new Set<Op>();
  let burst = false;
  for (const op of ops) if (op !== 'open' && links.add(op).size === LINKS.length) burst = true;
  const standing = ops.filter((op) => op === 'open' || !burst);
  const last = standing.at(-1);
  return {
    lastEvent: last === undefined ? 'sent' : last === 'open' ? 'opened' : 'clicked',
    opened: standing.length > 0,
  };
}

describe('last_event across a click burst, over every interleaving of clicks and pixel opens', () => {
  // 73 sequences of one to four requests.
  it('returns to the newest event that still stands, and keeps the standing open', { timeout: 120_000 }, async () => {
    const { token } = await app.createTeamWithKey();
    const sent = await app.request('POST', '/emails', {
      token,
      body: { from: 'a@acme.test', to: 'reader@example.com', subject: 'burst', text: 'hi' },
    });
    await app.run(async () =>
      deliverDue(app.deps, (await app.deps.orm.em.findOneOrFail(Email, sent.body.id)).region, [sent.body.id]),
    );
    const { sentAt } = await app.run(() => app.deps.orm.em.findOneOrFail(Email, sent.body.id));

    const all = [1, 2, 3, 4].flatMap(sequences);
    const failures: string[] = [];
    for (const [n, ops] of all.entries()) {
      // Each sequence on the same email, reset to sent, a quarter of an hour after the one before.
      await sql(`DELETE FROM tracking_click WHERE email_id = ?`, [sent.body.id]);
      await sql(`DELETE FROM email_tracking WHERE email_id = ?`, [sent.body.id]);
      await sql(`UPDATE email SET last_event = 'sent', last_event_at = ? WHERE id = ?`, [sentAt, sent.body.id]);
      const email = (await app.deps.orm.em
        .fork()
        .findOneOrFail(Email, sent.body.id, { exclude: ['html', 'text'] })) as IEmail;
      const start = sentAt!.getTime() + 60_000 + n * 900_000;
      for (const [i, op] of ops.entries()) {
        const request = { ipAddress: '198.51.100.7', userAgent: CHROME, timestamp: new Date(start + i * 200) };
        const em = app.deps.orm.em.fork();
        if (op === 'open') await recordOpen(app.deps, em, email, request);
        else await recordClick(app.deps, em, email, { ...request, link: LINKS[op]!, linkCount: LINKS.length });
      }
      const [row] = await sql<{ last_event: string; opened_at: Date | null }>(
        `SELECT e.last_event, t.opened_at FROM email e LEFT JOIN email_tracking t ON t.email_id = e.id WHERE e.id = ?`,
        [sent.body.id],
      );
      const actual = { lastEvent: row!.last_event, opened: row!.opened_at !== null };
      if (JSON.stringify(actual) !== JSON.stringify(model(ops)))
        failures.push(`${ops.join(' ')}: ${JSON.stringify(actual)}, expected ${JSON.stringify(model(ops))}`);
    }
    expect(failures).toEqual([]);
  });
});
