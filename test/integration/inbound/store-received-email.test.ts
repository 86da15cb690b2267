import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Event, ReceivedAttachment, ReceivedEmail } from '../../../server/entities/index.js';
import { storeReceivedEmail } from '../../../server/services/inbound/store-received-email.js';
import { useTestApp } from '../../support/test-app.js';

const domain = () => `in-${randomBytes(4).toString('hex')}.test`;
const verdicts = { spf: { result: 'none' }, dkim: [], dmarc: { result: 'none' } };
const envelope = (recipients: string[]) => ({
  mailFrom: 'sender@elsewhere.test',
  recipients,
  peerIp: '127.0.0.1',
  helo: 'client.test',
});

const app = useTestApp();

const message = (to: string) =>
  Buffer.from(
    [
      'From: Sender <sender@elsewhere.test>',
      `To: ${to}`,
      'Cc: other@elsewhere.test',
      'Subject: Hello inbound',
      'Message-ID: <m1@elsewhere.test>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Hi <img src="cid:logo@x"></p>',
      '--b1',
      'Content-Type: image/png',
      'Content-Disposition: inline; filename="logo.png"',
      'Content-ID: <logo@x>',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('PNGDATA').toString('base64'),
      '--b1--',
      '',
    ].join('\r\n'),
  );

describe('storeReceivedEmail', () => {
  it('keeps one row per team, with only that team’s recipients, parsed fields and attachments', async () => {
    const [a, b] = [domain(), domain()];
    const teamA = await app.createTeamWithKey('full_access', { receivingDomains: [a] });
    const teamB = await app.createTeamWithKey('full_access', { receivingDomains: [b] });
    const raw = message(`x@${a}`);
    const stored = await storeReceivedEmail(app.deps, {
      envelope: envelope([`X@${a.toUpperCase()}`, `y@${b}`, 'z@unknown.test']),
      raw,
      verdicts,
    });
    expect(stored.map((s) => s.teamId).sort()).toEqual([teamA.teamId, teamB.teamId].sort());
    expect(stored.every((s) => s.id.length === 36)).toBe(true);
    const rowA = await app.run(() =>
      app.deps.orm.em.findOneOrFail(ReceivedEmail, { team: teamA.teamId }, { populate: ['raw'] }),
    );
    expect(rowA).toMatchObject({
      receivedFor: [`x@${a}`],
      domain: a,
      subject: 'Hello inbound',
      from: 'Sender <sender@elsewhere.test>',
      to: [`x@${a}`],
      cc: ['other@elsewhere.test'],
      messageId: '<m1@elsewhere.test>',
      parseError: null,
      size: raw.length,
    });
    expect(rowA.html).toContain('cid:logo@x');
    expect(Buffer.compare(rowA.raw.unwrap()!, raw)).toBe(0);
    const [attachment] = await app.run(() =>
      app.deps.orm.em.find(ReceivedAttachment, { email: rowA.id }, { populate: ['content'] }),
    );
    expect(attachment).toMatchObject({
      filename: 'logo.png',
      contentType: 'image/png',
      contentDisposition: 'inline',
      contentId: 'logo@x',
      size: 7,
    });
    expect(attachment!.content.unwrap()!.toString()).toBe('PNGDATA');
    const rowB = await app.run(() => app.deps.orm.em.findOneOrFail(ReceivedEmail, { team: teamB.teamId }));
    expect(rowB.receivedFor).toEqual([`y@${b}`]);
  });

  it('keeps nothing for a domain that does not receive (or was never verified)', async () => {
    const stored = await storeReceivedEmail(app.deps, {
      envelope: envelope([`x@${domain()}`]),
      raw: message('x@nowhere.test'),
      verdicts,
    });
    expect(stored).toEqual([]);
  });

  it('stores messages of concurrent sessions together, each with its own bytes, attachments and event', async () => {
    const names = Array.from({ length: 12 }, domain);
    const teams = await Promise.all(
      names.map((name) => app.createTeamWithKey('full_access', { receivingDomains: [name] })),
    );
    // Of different sizes, so a slice of the shared bytes taken at a neighbour's offset would show.
    const raws = names.map((name, i) =>
      Buffer.concat([message(`x@${name}`), Buffer.from(`${'p'.repeat(i * 97)}\r\n`)]),
    );
    const stored = await Promise.all(
      names.map((name, i) =>
        storeReceivedEmail(app.deps, { envelope: envelope([`x@${name}`]), raw: raws[i]!, verdicts }),
      ),
    );
    expect(stored.map(([row]) => row!.teamId)).toEqual(teams.map((team) => team.teamId));
    for (const [i, [row]] of stored.entries()) {
      const email = await app.run(() => app.deps.orm.em.findOneOrFail(ReceivedEmail, row!.id, { populate: ['raw'] }));
      expect(Buffer.compare(email.raw.unwrap()!, raws[i]!)).toBe(0);
      expect(email.receivedFor).toEqual([`x@${names[i]}`]);
      const [attachment] = await app.run(() =>
        app.deps.orm.em.find(ReceivedAttachment, { email: row!.id }, { populate: ['content'] }),
      );
      expect(attachment!.content.unwrap()!.toString()).toBe('PNGDATA');
      const event = await app.run(() =>
        app.deps.orm.em.findOneOrFail(Event, { team: row!.teamId, type: 'email.received' }),
      );
      expect(event.payload).toMatchObject({ email_id: row!.id, attachments: [{ id: attachment!.id }] });
    }
  });

  it('fails only the message whose own data the database refuses, when it shared a statement with others', async () => {
    const names = Array.from({ length: 5 }, domain);
    await app.createTeamWithKey('full_access', { receivingDomains: names });
    // Two statements start at once; the messages stored meanwhile share the next one. PostgreSQL text cannot hold U+0000.
    const results = await Promise.allSettled(
      names.map((name, i) =>
        storeReceivedEmail(app.deps, {
          envelope: { ...envelope([`x@${name}`]), helo: i === 3 ? 'client\0.test' : 'client.test' },
          raw: message(`x@${name}`),
          verdicts,
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
  });
});
