import { describe, expect, it } from 'vitest';
import { CapturedMessage, Email, Event } from '../../../server/entities/index.js';
import type { EmailProvider } from '../../../server/providers/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { useTestApp } from '../../support/test-app.js';

// Issue 33, finding 11: DELETE /emails/{id} right after a send answered 422 "being sent right now;
// retry" whenever it met the attempt in flight (2 of 5 runs). Here every run meets it, on purpose.

const app = useTestApp({ team: { verifiedDomains: ['acme.test'] } });

/**
 * Holds the region's real provider inside its send until `release()`: the attempt is claimed
 * (`sending`, under its lease) and in the provider's hands, exactly the window the DELETE met.
 */
function holdProvider(provider: EmailProvider) {
  let entered!: () => void;
  let release!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const p = provider as unknown as Record<string, unknown>;
  const originals = { send: p.send, sendBatch: p.sendBatch };
  for (const name of ['send', 'sendBatch'] as const) {
    const original = originals[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!original) continue;
    p[name] = async (...args: unknown[]) => {
      entered();
      await gate;
      return original.apply(provider, args);
    };
  }
  return {
    inside,
    release: () => {
      release();
      Object.assign(p, originals);
    },
  };
}

describe('DELETE /emails/{id} while the email is being sent (finding 11)', () => {
  it('answers 200 every time, 30 times in a row, and the attempt in flight writes nothing afterwards', async () => {
    for (let run = 0; run < 30; run++) {
      const sent = await app.request('POST', '/emails', {
        token: app.token,
        body: { from: 'a@acme.test', to: 'user@example.com', subject: `in flight ${run}`, text: 'body' },
      });
      expect(sent.status).toBe(200);
      const id = sent.body.id as string;
      const { region } = await app.run(() => app.deps.orm.em.findOneOrFail(Email, id));
      const hold = holdProvider(app.deps.providers.forRegion(region));
      const attempt = app.run(() => deliverDue(app.deps, region, [id]));
      await hold.inside;
      expect((await app.run(() => app.deps.orm.em.fork().findOneOrFail(Email, id))).status).toBe('sending');

      const deleted = await app.request('DELETE', `/emails/${id}`, { token: app.token });
      expect({ run, status: deleted.status, body: deleted.body }).toEqual({
        run,
        status: 200,
        body: { object: 'email', id, deleted: true },
      });

      hold.release();
      await attempt;
      const em = app.deps.orm.em.fork();
      expect({
        run,
        email: await em.count(Email, { id }),
        events: await em.count(Event, { email: id }),
        captured: await em.count(CapturedMessage, { subject: `in flight ${run}` }),
      }).toEqual({ run, email: 0, events: 0, captured: 0 });
      expect((await app.request('GET', `/emails/${id}`, { token: app.token })).status).toBe(404);
    }
  });
});
