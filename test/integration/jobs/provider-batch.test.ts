import type { OutboundMessage } from '../../../server/mail/outbound-message.js';
import { describe, expect, it } from 'vitest';
import {
  type BatchOutcome,
  type EmailProvider,
  mapConcurrently,
  ProviderError,
  sendBatch,
  Unrecorded,
} from '../../../server/providers/index.js';
import { CaptureProvider } from '../../../server/providers/capture.provider.js';
import { SmtpProvider } from '../../../server/providers/smtp.provider.js';
import { drainOutbox } from '../../../server/services/outbox/drain-outbox.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const message = (i: number): OutboundMessage => ({
  emailId: `e${i}`,
  messageId: `<e${i}@acme.test>`,
  from: { name: null, address: 'a@acme.test' },
  to: [{ name: null, address: `r${i}@example.com` }],
  cc: [],
  bcc: [],
  replyTo: [],
  envelopeTo: [`r${i}@example.com`],
  subject: 's',
  html: null,
  text: 't',
  headers: {},
  attachments: [],
});

describe('the capture provider', () => {
  it('stores a whole drained batch, one message per email, each email pointing at its own', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await app.request('POST', '/emails', {
        token: app.token,
        body: { from: 'a@acme.test', to: `c${i}@example.com`, subject: `captured ${i}`, text: 'x' },
      });
      ids.push(res.body.id);
    }
    await app.run(() => drainOutbox(app.deps, 'us-east-1'));
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string; provider_message_id: string; captured: string; subject: string }[]>(
        `SELECT e.id, e.provider_message_id, c.id AS captured, c.subject FROM email e JOIN captured_message c ON c.message_id = e.message_id WHERE e.id = ANY(?::uuid[]) ORDER BY c.subject`,
        [`{${ids.join(',')}}`],
      );
    expect(rows.map((r) => r.subject)).toEqual(['captured 0', 'captured 1', 'captured 2']);
    for (const row of rows) expect(row.provider_message_id).toBe(row.captured);
  });
});

describe('a provider without a batch method', () => {
  // Stands in for an outside provider (as SES would be): only `send`.
  const sendOnly = (send: EmailProvider['send']): EmailProvider => ({
    type: 'test',
    regions: ['us-east-1'],
    takesReturnPath: false,
    send,
    setUpDomain: async () => ({ records: [], dkim: null }),
    tearDownDomain: async () => {},
    verify: async () => {},
    close: async () => {},
  });

  it('gets `send` per message, 8 at a time, an outcome per message in order', async () => {
    let inFlight = 0;
    let most = 0;
    const provider = sendOnly(async (m) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight -= 1;
      if (m.emailId === 'e3') throw new ProviderError('550 no such user', false);
      return { providerMessageId: `p-${m.emailId}`, recipients: [] };
    });
    const reported: [number, BatchOutcome][] = [];
    const outcomes = await sendBatch(
      provider,
      Array.from({ length: 20 }, (_, i) => message(i)),
      new AbortController().signal,
      (at, outcome) => void reported.push([at, outcome]),
    );
    expect(most).toBe(8);
    // Each outcome was reported once, as it came, and is the one returned.
    expect(reported.map(([at]) => at).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const [at, outcome] of reported) expect(outcome).toBe(outcomes[at]);
    expect(outcomes).toHaveLength(20);
    expect(outcomes[3]).toBeInstanceOf(ProviderError);
    expect(
      outcomes
        .filter((o) => !(o instanceof ProviderError))
        .map((o) => (o as { providerMessageId: string }).providerMessageId),
    ).toEqual(Array.from({ length: 20 }, (_, i) => `p-e${i}`).filter((id) => id !== 'p-e3'));
  });

  it('does not start what is left once the send timeout has passed: those are retried, not sent late', async () => {
    const timeout = new AbortController();
    const started: string[] = [];
    const provider = sendOnly(async (m) => {
      started.push(m.emailId);
      timeout.abort();
      return { providerMessageId: m.emailId, recipients: [] };
    });
    const outcomes = await sendBatch(
      provider,
      Array.from({ length: 20 }, (_, i) => message(i)),
      timeout.signal,
    );
    expect(started).toEqual(['e0']);
    const skipped = outcomes.filter((o) => o instanceof ProviderError);
    expect(skipped).toHaveLength(19);
    expect(skipped.every((o) => (o as ProviderError).transient)).toBe(true);
  });
});

describe('messages taken and not yet recorded', () => {
  it('never pass their bound, however many lanes send, and each recording lets the next one go', async () => {
    const unrecorded = new Unrecorded(3, 8);
    let started = 0;
    const record: (() => void)[] = [];
    const run = mapConcurrently(
      Array.from({ length: 10 }, (_, i) => message(i)),
      8,
      async (m) => {
        started += 1;
        return { providerMessageId: m.emailId, recipients: [] };
      },
      new AbortController().signal,
      () => new Promise<void>((resolve) => record.push(resolve)),
      unrecorded,
    );
    // Everything here moves in microtasks: by the next macrotask, every lane that can go has gone.
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    expect(started).toBe(3);
    record.splice(0, 2).forEach((recorded) => recorded());
    await settle();
    expect(started).toBe(5);
    while (started < 10 || record.length > 0) {
      record.splice(0).forEach((recorded) => recorded());
      await settle();
    }
    expect(await run).toHaveLength(10);
  });
});

describe('the SMTP provider', () => {
  it('sends a batch over many pooled connections without piling listeners onto the batch’s abort signal', async () => {
    const sink = await startSmtpSink();
    const provider = new SmtpProvider(
      { type: 'smtp', url: sink.url, regions: ['us-east-1'], max_connections: 10, rate_per_second: 10_000 },
      10_000,
      'postlane',
    );
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const reported: number[] = [];
      const outcomes = await sendBatch(
        provider,
        Array.from({ length: 60 }, (_, i) => message(i)),
        AbortSignal.timeout(30_000),
        (at) => void reported.push(at),
      );
      expect(outcomes.every((o) => !(o instanceof ProviderError))).toBe(true);
      expect(reported).toHaveLength(60);
      expect(sink.received).toHaveLength(60);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await provider.close();
      await sink.close();
    }
  });
});

describe('the SMTP provider with VERP return paths (issue 33, 6)', () => {
  it('sends one envelope per recipient with its own return path, and gives each recipient its own verdict in the one outcome', async () => {
    const sink = await startSmtpSink({
      reject: new Map([
        ['later@example.com', 451],
        ['gone@example.com', 550],
      ]),
    });
    const provider = new SmtpProvider(
      { type: 'smtp', url: sink.url, regions: ['us-east-1'], max_connections: 2, rate_per_second: 10_000 },
      10_000,
      'postlane',
    );
    const recipients = ['fine@example.com', 'later@example.com', 'gone@example.com', 'also@example.com'];
    const returnPath = (address: string) => `bounces+${address.split('@')[0]}@bounces.acme.test`;
    try {
      const result = await provider.send(
        {
          ...message(0),
          to: recipients.map((address) => ({ name: null, address })),
          envelopeTo: recipients,
          returnPaths: Object.fromEntries(recipients.map((address) => [address, returnPath(address)])),
        },
        AbortSignal.timeout(30_000),
      );
      expect(result.recipients.map(({ address, accepted, transient }) => ({ address, accepted, transient }))).toEqual([
        { address: 'fine@example.com', accepted: true, transient: false },
        { address: 'later@example.com', accepted: false, transient: true },
        { address: 'gone@example.com', accepted: false, transient: false },
        { address: 'also@example.com', accepted: true, transient: false },
      ]);
      expect(sink.received.map((m) => m.envelope)).toEqual([
        { from: returnPath('fine@example.com'), to: ['fine@example.com'] },
        { from: returnPath('also@example.com'), to: ['also@example.com'] },
      ]);
    } finally {
      await provider.close();
      await sink.close();
    }
  });

  it('capture stores one message per envelope, as a relay would get them, each recipient accepted once', async () => {
    const provider = new CaptureProvider(['us-east-1'], { selector: 'postlane', spfInclude: undefined });
    const recipients = ['one@example.com', 'two@example.com'];
    try {
      const [outcome] = await provider.sendBatch(
        [
          {
            ...message(2),
            envelopeTo: recipients,
            returnPaths: Object.fromEntries(recipients.map((address) => [address, `bounces+${address[0]}@b.test`])),
          },
        ],
        AbortSignal.timeout(30_000),
        () => {},
      );
      expect(outcome).not.toBeInstanceOf(ProviderError);
      const result = outcome as Exclude<BatchOutcome, ProviderError>;
      expect(result.recipients.map((r) => [r.address, r.accepted])).toEqual([
        ['one@example.com', true],
        ['two@example.com', true],
      ]);
      expect(
        (result.staged as { envelope_from: string; envelope_to: string[] }[]).map((row) => [
          row.envelope_from,
          row.envelope_to,
        ]),
      ).toEqual([
        ['bounces+o@b.test', ['one@example.com']],
        ['bounces+t@b.test', ['two@example.com']],
      ]);
    } finally {
      await provider.close();
    }
  });

  it('fails the message when every envelope fails (the relay away), as a single-envelope message does', async () => {
    const sink = await startSmtpSink();
    await sink.close();
    const provider = new SmtpProvider(
      { type: 'smtp', url: sink.url, regions: ['us-east-1'], max_connections: 1, rate_per_second: 10_000 },
      5_000,
      'postlane',
    );
    const recipients = ['a@example.com', 'b@example.com'];
    try {
      await expect(
        provider.send(
          {
            ...message(1),
            envelopeTo: recipients,
            returnPaths: Object.fromEntries(recipients.map((address) => [address, `bounces+x@b.test`])),
          },
          AbortSignal.timeout(30_000),
        ),
      ).rejects.toMatchObject({ name: 'ProviderError', transient: true });
    } finally {
      await provider.close();
    }
  });
});

describe('messages with the transport', () => {
  it('never pass their bound across batches, while outcomes waiting for their commit keep the other places', async () => {
    const unrecorded = new Unrecorded(10, 2);
    let inHand = 0;
    let most = 0;
    const send = async (m: OutboundMessage) => {
      inHand += 1;
      most = Math.max(most, inHand);
      await new Promise((resolve) => setImmediate(resolve));
      inHand -= 1;
      return { providerMessageId: m.emailId, recipients: [] };
    };
    const batch = (from: number) =>
      mapConcurrently(
        Array.from({ length: 5 }, (_, i) => message(from + i)),
        4,
        send,
        new AbortController().signal,
        () => undefined,
        unrecorded,
      );
    expect((await Promise.all([batch(0), batch(5)])).flat()).toHaveLength(10);
    expect(most).toBe(2);
  });
});
