import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Domain, ReceivedEmail, Team } from '../../../server/entities/index.js';
import { storeReceivedEmail } from '../../../server/services/inbound/store-received-email.js';
import { useTestApp } from '../../support/test-app.js';

// Issue 33, findings 4 and 5: what one received message may cost a reader, and who receives it.

const domain = () => `in-${randomBytes(4).toString('hex')}.test`;
const verdicts = { spf: { result: 'none' }, dkim: [], dmarc: { result: 'none' } };
const envelope = (recipients: string[]) => ({
  mailFrom: 'sender@elsewhere.test',
  recipients,
  peerIp: '127.0.0.1',
  helo: 'client.test',
});

const app = useTestApp();

/** The attack as measured: a 200 KB inline image, named by 400 `<img src="cid:x">`, in a message of about 280 KB. */
function amplifier(to: string): Buffer {
  const image = randomBytes(200 * 1024)
    .toString('base64')
    .replace(/.{76}/g, '$&\r\n');
  const html = '<p>hi</p>' + '<img src="cid:x">'.repeat(400);
  return Buffer.from(
    [
      'From: Sender <sender@elsewhere.test>',
      `To: ${to}`,
      'Subject: amplify',
      'MIME-Version: 1.0',
      'Content-Type: multipart/related; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
      '--b1',
      'Content-Type: image/png',
      'Content-Disposition: inline; filename="x.png"',
      'Content-ID: <x>',
      'Content-Transfer-Encoding: base64',
      '',
      image,
      '--b1--',
      '',
    ].join('\r\n'),
  );
}

describe('GET /emails/receiving/{id} with cid: inlining (finding 4)', () => {
  it('inlines no more bytes than the message itself holds: 400 references to a 200 KB part answer in under twice the message', async () => {
    const name = domain();
    const team = await app.createTeamWithKey('full_access', { receivingDomains: [name] });
    const raw = amplifier(`alice@${name}`);
    expect(raw.length).toBeGreaterThan(270 * 1024);
    expect(raw.length).toBeLessThan(290 * 1024);
    const [stored] = await storeReceivedEmail(app.deps, { envelope: envelope([`alice@${name}`]), raw, verdicts });
    const response = await app.request('GET', `/emails/receiving/${stored!.id}`, { token: team.token });
    expect(response.status).toBe(200);
    // Before the cap: 106.7 MB (400 copies of the image as base64).
    expect(response.text.length).toBeLessThan(2 * raw.length);
    const html = response.body.html as string;
    // The first reference is inlined; the rest stay `cid:` once the budget is spent.
    expect(html.match(/data:image\/png;base64,/g)?.length).toBe(1);
    expect(html.match(/cid:x/g)?.length).toBe(399);
    // The HTML as received is still there, whole, with html_format=cid.
    const asReceived = await app.request('GET', `/emails/receiving/${stored!.id}?html_format=cid`, {
      token: team.token,
    });
    expect(asReceived.body.html.match(/cid:x/g)?.length).toBe(400);
  });
});

describe('receiving follows the domain’s current verification (finding 5)', () => {
  it('team B’s failed copy of team A’s domain, verified 90 days ago, receives nothing; only team A stores the message', async () => {
    const name = domain();
    const teamA = await app.createTeamWithKey('full_access', { receivingDomains: [name] });
    const teamB = await app.createTeamWithKey();
    const ninetyDaysAgo = new Date(Date.now() - 90 * 24 * 3600 * 1000);
    // A name has one owner now (POST /domains answers 409 for B): B's copy is a row left from before that.
    await app.run(async () => {
      const em = app.deps.orm.em;
      em.create(Domain, {
        team: em.getReference(Team, teamB.teamId),
        name,
        region: app.config.POSTLANE_DEFAULT_REGION,
        status: 'failed',
        receiving: true,
        records: [],
        dkimSelector: null,
        dkimPrivateKey: null,
        verifiedAt: ninetyDaysAgo,
        nextCheckAt: null,
      });
      await em.flush();
    });
    const raw = Buffer.from(`From: s@elsewhere.test\r\nTo: alice@${name}\r\nSubject: mine\r\n\r\nhello\r\n`);
    const stored = await storeReceivedEmail(app.deps, { envelope: envelope([`alice@${name}`]), raw, verdicts });
    // Before: stored for both teams.
    expect(stored.map((s) => s.teamId)).toEqual([teamA.teamId]);
    expect(await app.run(() => app.deps.orm.em.count(ReceivedEmail, { team: teamB.teamId }))).toBe(0);
    const listB = await app.request('GET', '/emails/receiving', { token: teamB.token });
    expect(listB.body.data).toEqual([]);
  });

  it('a domain that lost its verification stops receiving, and receives again once verified', async () => {
    const name = domain();
    const team = await app.createTeamWithKey('full_access', { receivingDomains: [name] });
    const raw = Buffer.from(`From: s@elsewhere.test\r\nTo: bob@${name}\r\nSubject: x\r\n\r\nhello\r\n`);
    for (const status of ['partially_verified', 'pending', 'temporary_failure', 'failed'] as const) {
      await app.run(() => app.deps.orm.em.nativeUpdate(Domain, { team: team.teamId, name }, { status }));
      const stored = await storeReceivedEmail(app.deps, { envelope: envelope([`bob@${name}`]), raw, verdicts });
      expect({ status, stored }).toEqual({ status, stored: [] });
    }
    await app.run(() => app.deps.orm.em.nativeUpdate(Domain, { team: team.teamId, name }, { status: 'verified' }));
    const stored = await storeReceivedEmail(app.deps, { envelope: envelope([`bob@${name}`]), raw, verdicts });
    expect(stored.map((s) => s.teamId)).toEqual([team.teamId]);
  });
});
