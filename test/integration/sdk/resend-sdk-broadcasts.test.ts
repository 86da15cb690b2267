import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';
import { untilFound } from '../../support/until.js';

let resend: Resend;

// The default capture provider, and workers in this process.
const app = useTestApp({ jobs: 'worker' });
beforeAll(async () => {
  process.env.RESEND_BASE_URL = app.url;
  resend = new Resend(app.token);
});
afterAll(async () => {
  delete process.env.RESEND_BASE_URL;
});

describe('the official resend SDK: broadcasts', () => {
  it('creates, edits, lists, duplicates, sends a broadcast to a segment, and reads its progress', async () => {
    const { data: segment } = await resend.segments.create({ name: 'Newsletter' });
    for (const email of ['one@example.com', 'two@example.com', 'three@example.com']) {
      const { error } = await resend.contacts.create({
        email,
        firstName: email.split('@')[0],
        segments: [{ id: segment!.id }],
      });
      expect(error).toBeNull();
    }

    const { data: created, error } = await resend.broadcasts.create({
      segmentId: segment!.id,
      from: 'Acme <news@acme.test>',
      subject: 'News',
      html: '<p>Hi {{{FIRST_NAME}}}</p><a href="{{{UNSUBSCRIBE_URL}}}">unsubscribe</a>',
      name: 'November',
    });
    expect(error).toBeNull();
    const id = created!.id;
    expect(
      (await resend.broadcasts.update(id, { subject: 'November news', previewText: 'What is new' })).data,
    ).toMatchObject({ id });
    const { data: got } = await resend.broadcasts.get(id);
    expect(got).toMatchObject({
      object: 'broadcast',
      id,
      name: 'November',
      subject: 'November news',
      preview_text: 'What is new',
      status: 'draft',
      segment_id: segment!.id,
    });
    expect((await resend.broadcasts.list()).data?.data.map((b) => b.id)).toContain(id);
    const { data: copy } = await resend.broadcasts.duplicate(id);
    expect(copy).toMatchObject({ object: 'broadcast' });
    expect((await resend.broadcasts.remove(copy!.id)).data).toMatchObject({ id: copy!.id, deleted: true });

    const { data: sent, error: sendError } = await resend.broadcasts.send(id);
    expect(sendError).toBeNull();
    expect(sent).toMatchObject({ id, estimated: true });

    const done = await untilFound(async () => {
      const read = await resend.broadcasts.get(id);
      return read.data?.status === 'sent' ? read : undefined;
    }, 'the broadcast was never sent');
    expect(done.data).toMatchObject({ status: 'sent', sent_count: 3 });
    const captured = await app.request('GET', '/emails?limit=10', { token: app.token });
    const mine = captured.body.data.filter((e: { subject: string }) => e.subject === 'November news');
    expect(mine.map((e: { to: string[] }) => e.to[0]).sort()).toEqual([
      'one@example.com',
      'three@example.com',
      'two@example.com',
    ]);
    expect(mine.every((e: { last_event: string }) => e.last_event === 'sent')).toBe(true);
  });

  it('schedules on create and cancels', async () => {
    const { data: segment } = await resend.audiences.create({ name: 'Later' });
    await resend.contacts.create({ email: 'later@example.com', audienceId: segment!.id });
    const { data: created, error } = await resend.broadcasts.create({
      audienceId: segment!.id,
      from: 'news@acme.test',
      subject: 'Later',
      text: 'Soon',
      send: true,
      scheduledAt: 'in 1 hour',
    });
    expect(error).toBeNull();
    expect((await resend.broadcasts.get(created!.id)).data).toMatchObject({
      status: 'scheduled',
      audience_id: segment!.id,
    });
    const { data: canceled } = await resend.broadcasts.cancel(created!.id);
    expect(canceled).toMatchObject({ object: 'broadcast', id: created!.id, canceled_remaining: 1 });
    expect((await resend.broadcasts.get(created!.id)).data).toMatchObject({ status: 'canceled' });
  });
});
