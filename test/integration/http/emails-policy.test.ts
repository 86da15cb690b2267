import { describe, expect, it } from 'vitest';
import { Email, Event, Team } from '../../../server/entities/index.js';
import { readPreferenceToken } from '../../../server/services/preferences/preference-token.js';
import { addSuppressions } from '../../../server/services/suppressions/add-suppression.js';
import type { SuppressionOrigin } from '../../../server/entities/index.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ env: { POSTLANE_PUBLIC_URL: 'https://mail.example.com' } });

const valid = { from: 'Acme <hello@acme.test>', subject: 'Hi', html: '<p>Hi</p>' };

async function team() {
  const { token, teamId } = await app.createTeamWithKey();
  const suppress = (email: string, origin: SuppressionOrigin = 'bounce') =>
    app.run(() =>
      app.deps.orm.em.transactional((em) =>
        addSuppressions(app.deps, em, { teamId, emails: [email], origin, source: null }),
      ),
    );
  const countEmails = () => app.run(() => app.deps.orm.em.count(Email, { team: teamId }));
  const stored = (id: string) => app.run(() => app.deps.orm.em.findOneOrFail(Email, id));
  const topic = async (default_subscription: 'opt_in' | 'opt_out' = 'opt_in') =>
    (await app.request('POST', '/topics', { token, body: { name: `Topic ${Math.random()}`, default_subscription } }))
      .body.id as string;
  return { token, teamId, suppress, countEmails, stored, topic };
}

describe('suppression at send time', () => {
  it('refuses a send whose every `to` is suppressed, and writes nothing', async () => {
    const { token, suppress, countEmails } = await team();
    await suppress('gone@example.com');
    await suppress('spam@example.com', 'complaint');
    await suppress('manual@example.com', 'manual');
    const sent = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: ['Gone@Example.com', 'spam@example.com', 'manual@EXAMPLE.com'], cc: 'ok@example.com' },
    });
    expect(sent.status).toBe(422);
    expect(sent.body).toEqual({
      statusCode: 422,
      name: 'all_recipients_suppressed',
      message: 'All recipients are suppressed',
    });
    expect(await countEmails()).toBe(0);
  });

  it('omits suppressed recipients from a send that still has someone left', async () => {
    const { token, suppress, stored } = await team();
    await suppress('gone@example.com');
    const sent = await app.request('POST', '/emails', {
      token,
      body: {
        ...valid,
        to: ['gone@example.com', 'Kept <kept@example.com>'],
        cc: 'gone@example.com',
        bcc: ['b@example.com'],
      },
    });
    expect(sent.status).toBe(200);
    const email = await stored(sent.body.id);
    expect({ to: email.to, cc: email.cc, bcc: email.bcc }).toEqual({
      to: ['Kept <kept@example.com>'],
      cc: [],
      bcc: ['b@example.com'],
    });
    const recipients = await app.run(() =>
      app.deps.orm.em
        .getConnection()
        .execute<{ address: string }[]>('SELECT address FROM email_recipient WHERE email_id = ? ORDER BY address', [
          email.id,
        ]),
    );
    expect(recipients.map((r) => r.address)).toEqual(['b@example.com', 'kept@example.com']);
  });

  it('counts unsubscribe-origin entries only for a send with a topic_id', async () => {
    const { token, suppress, topic } = await team();
    await suppress('left@example.com', 'unsubscribe');
    expect((await app.request('POST', '/emails', { token, body: { ...valid, to: 'left@example.com' } })).status).toBe(
      200,
    );
    const topical = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: 'left@example.com', topic_id: await topic() },
    });
    expect(topical.body.name).toBe('all_recipients_suppressed');
  });

  it("a team's suppressions never affect another team", async () => {
    const first = await team();
    const second = await team();
    await first.suppress('shared@example.com');
    expect(
      (await app.request('POST', '/emails', { token: second.token, body: { ...valid, to: 'shared@example.com' } }))
        .status,
    ).toBe(200);
  });

  it('a strict batch is refused as a whole, naming the index; a permissive one skips and lists it', async () => {
    const { token, suppress, countEmails } = await team();
    await suppress('gone@example.com');
    const body = [
      { ...valid, to: 'a@example.com' },
      { ...valid, to: 'gone@example.com' },
      { ...valid, to: 'b@example.com' },
    ];
    const strict = await app.request('POST', '/emails/batch', { token, body });
    expect(strict.status).toBe(422);
    expect(strict.body).toEqual({
      statusCode: 422,
      name: 'all_recipients_suppressed',
      message: '1: All recipients are suppressed',
    });
    expect(await countEmails()).toBe(0);

    const permissive = await app.request('POST', '/emails/batch', {
      token,
      body: [...body, { ...valid, to: 'not an address' }],
      headers: { 'x-batch-validation': 'permissive' },
    });
    expect(permissive.status).toBe(200);
    expect(permissive.body.data).toHaveLength(2);
    expect(permissive.body.errors).toEqual([
      { index: 1, message: 'All recipients are suppressed' },
      { index: 3, message: expect.stringMatching(/^to\.0: /) },
    ]);
    expect(await countEmails()).toBe(2);
  });

  it('records suppression.added once, with the spec data', async () => {
    const { teamId, suppress } = await team();
    await suppress('Twice@example.com');
    await suppress('twice@example.com', 'complaint');
    const events = await app.run(() => app.deps.orm.em.find(Event, { team: teamId, type: 'suppression.added' }));
    expect(events.map((e) => e.payload)).toEqual([
      {
        id: expect.any(String),
        email: 'twice@example.com',
        origin: 'bounce',
        source: null,
        source_id: null,
        created_at: expect.any(String),
      },
    ]);
  });
});

describe('sending paused', () => {
  it('refuses single and batch sends with 403 sending_paused and writes nothing', async () => {
    const { token, teamId, countEmails } = await team();
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, teamId, { sendingPausedAt: new Date() }));
    const single = await app.request('POST', '/emails', { token, body: { ...valid, to: 'a@example.com' } });
    expect(single.status).toBe(403);
    expect(single.body.name).toBe('sending_paused');
    const batch = await app.request('POST', '/emails/batch', { token, body: [{ ...valid, to: 'a@example.com' }] });
    expect(batch.body).toMatchObject({ statusCode: 403, name: 'sending_paused' });
    expect(await countEmails()).toBe(0);
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, teamId, { sendingPausedAt: null }));
    expect((await app.request('POST', '/emails', { token, body: { ...valid, to: 'a@example.com' } })).status).toBe(200);
  });
});

describe('templates', () => {
  it('refuses an unknown template with 422, with or without a body of its own', async () => {
    const { token, countEmails } = await team();
    const { html: _html, ...withoutBody } = valid;
    for (const body of [
      { ...withoutBody, to: 'a@example.com', template: { id: 'welcome', variables: { NAME: 'Ann' } } },
      { ...valid, to: 'a@example.com', template: { id: 'welcome' } },
    ]) {
      const sent = await app.request('POST', '/emails', { token, body });
      expect(sent.status).toBe(422);
      expect(sent.body.message).toBe('template.id: no template with id "welcome"');
    }
    const badVariables = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: 'a@example.com', template: { id: 'x', variables: { NAME: { nested: true } } } },
    });
    expect(badVariables.body.message).toMatch(/^template\.variables\.NAME: /);
    expect(await countEmails()).toBe(0);
  });
});

describe('unsubscribe links', () => {
  it('a topic email gets the one-click pair, and {{{UNSUBSCRIBE_URL}}} resolves to the preference page', async () => {
    const { token, teamId, stored, topic } = await team();
    const TOPIC = await topic();
    const sent = await app.request('POST', '/emails', {
      token,
      body: {
        ...valid,
        to: ['Ann <Ann@example.com>', 'bo@example.com'],
        topic_id: TOPIC,
        html: '<a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
        text: 'Leave: {{{UNSUBSCRIBE_URL}}}',
      },
    });
    expect(sent.status).toBe(200);
    const email = await stored(sent.body.id);
    const oneClick = /^<https:\/\/mail\.example\.com\/unsubscribe\/([A-Za-z0-9_-]+)>$/.exec(
      email.headers['List-Unsubscribe']!,
    );
    expect(oneClick).not.toBeNull();
    expect(email.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    expect(readPreferenceToken(app.deps.secrets, oneClick![1]!)).toEqual({
      teamId,
      email: 'ann@example.com',
      topicId: TOPIC,
    });
    expect(email.html).toBe(`<a href="https://mail.example.com/preferences/${oneClick![1]}">Unsubscribe</a>`);
    expect(email.text).toBe(`Leave: https://mail.example.com/preferences/${oneClick![1]}`);
    expect(email.topicId).toBe(TOPIC);
    expect((await app.request('GET', `/emails/${email.id}`, { token })).body.topic_id).toBe(TOPIC);
  });

  it("the caller's own pair replaces the generated one; the placeholder still reaches Postlane's page", async () => {
    const { token, stored, topic } = await team();
    const headers = {
      'List-Unsubscribe': '<https://acme.test/u/1>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    };
    const sent = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: 'a@example.com', topic_id: await topic(), headers, html: '{{{UNSUBSCRIBE_URL}}}' },
    });
    const email = await stored(sent.body.id);
    expect(email.headers).toEqual(headers);
    expect(email.html).toMatch(/^https:\/\/mail\.example\.com\/preferences\/[A-Za-z0-9_-]+$/);
  });

  it('an email without a topic gets no pair', async () => {
    const { token, stored } = await team();
    const sent = await app.request('POST', '/emails', { token, body: { ...valid, to: 'a@example.com' } });
    expect((await stored(sent.body.id)).headers).toEqual({});
  });
});

describe('topics at send time', () => {
  it("refuses a topic_id the team does not have, including another team's", async () => {
    const { token, countEmails } = await team();
    const other = await team();
    for (const topic_id of ['00000000-0000-4000-8000-000000000000', await other.topic()]) {
      const sent = await app.request('POST', '/emails', { token, body: { ...valid, to: 'a@example.com', topic_id } });
      expect(sent.status).toBe(422);
      expect(sent.body.message).toBe(`topic_id: no topic with id ${topic_id}`);
    }
    expect(await countEmails()).toBe(0);
  });

  it('drops contacts opted out of the topic (explicitly, by its default, or from everything); others still get it', async () => {
    const { token, topic, stored } = await team();
    const optIn = await topic('opt_in');
    const optOut = await topic('opt_out');
    const contact = async (email: string, extra: Record<string, unknown> = {}) =>
      expect((await app.request('POST', '/contacts', { token, body: { email, ...extra } })).status).toBe(201);
    await contact('chose-out@example.com');
    await app.request('PATCH', '/contacts/chose-out@example.com/topics', {
      token,
      body: [{ id: optIn, subscription: 'opt_out' }],
    });
    await contact('left-all@example.com', { unsubscribed: true });
    await contact('chose-in@example.com');
    await app.request('PATCH', '/contacts/chose-in@example.com/topics', {
      token,
      body: [{ id: optOut, subscription: 'opt_in' }],
    });
    await contact('silent@example.com');
    const to = [
      'chose-out@example.com',
      'left-all@example.com',
      'chose-in@example.com',
      'silent@example.com',
      'stranger@example.com',
    ];

    const first = await app.request('POST', '/emails', { token, body: { ...valid, to, topic_id: optIn } });
    expect((await stored(first.body.id)).to).toEqual([
      'chose-in@example.com',
      'silent@example.com',
      'stranger@example.com',
    ]);
    const second = await app.request('POST', '/emails', { token, body: { ...valid, to, topic_id: optOut } });
    expect((await stored(second.body.id)).to).toEqual(['chose-in@example.com', 'stranger@example.com']);
    // Mail without a topic is not marketing: opt-outs do not apply.
    const plain = await app.request('POST', '/emails', { token, body: { ...valid, to } });
    expect((await stored(plain.body.id)).to).toEqual(to);

    const nobody = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: ['left-all@example.com', 'chose-out@example.com'], topic_id: optIn },
    });
    expect(nobody.body).toEqual({
      statusCode: 422,
      name: 'all_recipients_suppressed',
      message: 'All recipients are suppressed',
    });
  });

  it('a one-click unsubscribe from a topic email drops the address from the next one', async () => {
    const { token, topic, stored } = await team();
    const news = await topic('opt_in');
    const sent = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: ['reader@example.com', 'other@example.com'], topic_id: news },
    });
    const oneClick = /<(https?:[^>]+)>/.exec((await stored(sent.body.id)).headers['List-Unsubscribe']!)![1]!;
    const path = new URL(oneClick).pathname;
    expect(
      (
        await fetch(`${app.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'List-Unsubscribe=One-Click',
        })
      ).status,
    ).toBe(200);
    const next = await app.request('POST', '/emails', {
      token,
      body: { ...valid, to: ['reader@example.com', 'other@example.com'], topic_id: news },
    });
    expect((await stored(next.body.id)).to).toEqual(['other@example.com']);
  });
});
