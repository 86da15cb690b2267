import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import packet from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnssecResolver } from '../../../server/dns/dnssec-resolver.js';
import { startDnsServer } from '../../support/dns-server.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let now = 0;
const resolver = (maxEntries = 100) =>
  new DnssecResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 }, () => now, maxEntries);
const addresses = (answer: Awaited<ReturnType<DnssecResolver['query']>>) =>
  answer.kind === 'found'
    ? answer.records.map((record) => (record.type === 'A' ? record.data : record.type))
    : answer.kind;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});

describe('DnssecResolver', () => {
  it('keeps an answer for its TTL (the test server’s 60 s), then asks again', async () => {
    const dnssec = resolver();
    dns.set('A', 'ttl.dnssec.test', ['192.0.2.1']);
    expect(addresses(await dnssec.query('ttl.dnssec.test', 'A'))).toEqual(['192.0.2.1']);

    dns.set('A', 'ttl.dnssec.test', ['192.0.2.2']);
    now += 59_000;
    expect(addresses(await dnssec.query('ttl.dnssec.test', 'A'))).toEqual(['192.0.2.1']);
    now += 2_000;
    expect(addresses(await dnssec.query('ttl.dnssec.test', 'A'))).toEqual(['192.0.2.2']);
  });

  it('keeps at most maxEntries answers, the oldest dropped first', async () => {
    const dnssec = resolver(1);
    dns.set('A', 'one.dnssec.test', ['192.0.2.1']);
    dns.set('A', 'two.dnssec.test', ['192.0.2.2']);
    await dnssec.query('one.dnssec.test', 'A');
    await dnssec.query('two.dnssec.test', 'A');
    dns.set('A', 'one.dnssec.test', ['192.0.2.3']);

    expect(addresses(await dnssec.query('one.dnssec.test', 'A'))).toEqual(['192.0.2.3']);
  });

  it('reads SERVFAIL and silence as unavailable, and keeps neither', async () => {
    const dnssec = resolver();
    dns.set('A', 'fail.dnssec.test', { fault: 'servfail' });
    dns.set('A', 'quiet.dnssec.test', { fault: 'timeout' });
    expect(await dnssec.query('fail.dnssec.test', 'A')).toEqual({ kind: 'unavailable', reason: 'SERVFAIL' });
    expect(await dnssec.query('quiet.dnssec.test', 'A')).toEqual({
      kind: 'unavailable',
      reason: `timeout asking 127.0.0.1`,
    });

    dns.set('A', 'fail.dnssec.test', ['192.0.2.4']);
    expect(addresses(await dnssec.query('fail.dnssec.test', 'A'))).toEqual(['192.0.2.4']);
  });

  it('calls nothing secure that a server did not mark AD (this test server validates nothing)', async () => {
    dns.set('MX', 'plain.dnssec.test', ['10 mx.plain.dnssec.test']);
    expect(await resolver().query('plain.dnssec.test', 'MX')).toMatchObject({ kind: 'found', secure: false });
    expect(await resolver().query('missing.dnssec.test', 'MX')).toEqual({ kind: 'missing', secure: false });
  });

  it('trusts only resolvers on loopback', () => {
    const trusted = (servers: string[]) =>
      new DnssecResolver({ POSTLANE_DNS_SERVERS: servers, POSTLANE_DNS_TIMEOUT_MS: 300 }).trusted;
    expect(trusted(['127.0.0.1'])).toBe(true);
    expect(trusted(['[::1]:5353'])).toBe(true);
    expect(trusted(['192.0.2.53', '::1'])).toBe(true);
    expect(trusted(['192.0.2.53:53', '[2001:db8::53]'])).toBe(false);
    expect(
      new DnssecResolver({ POSTLANE_DNS_SERVERS: [], POSTLANE_DNS_TIMEOUT_MS: 300 }, Date.now, 10, () => ['192.0.2.53'])
        .trusted,
    ).toBe(false);
  });
});

describe('DnssecResolver against a server that truncates every UDP answer', () => {
  let udp: Socket;
  let tcp: Server;
  let port: number;
  let udpQuestions = 0;

  beforeAll(async () => {
    // A server that answers every UDP question truncated, and the whole answer, AD set, over TCP.
    const answer = (query: packet.DecodedPacket, truncated: boolean): Buffer =>
      packet.encode({
        type: 'response',
        id: query.id,
        flags: packet.AUTHENTIC_DATA | (truncated ? packet.TRUNCATED_RESPONSE : 0),
        questions: query.questions,
        answers: truncated ? [] : [{ type: 'A', name: query.questions![0]!.name, ttl: 30, data: '192.0.2.9' }],
      });
    tcp = createServer((socket) =>
      socket.once('data', (data: Buffer) => {
        const reply = answer(packet.decode(data.subarray(2)), false);
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.end(Buffer.concat([length, reply]));
      }),
    );
    tcp.listen(0, '127.0.0.1');
    await once(tcp, 'listening');
    port = (tcp.address() as { port: number }).port;
    udp = createSocket('udp4');
    udp.on('message', (data, from) => {
      udpQuestions += 1;
      udp.send(answer(packet.decode(data), true), from.port, from.address);
    });
    udp.bind(port, '127.0.0.1');
    await once(udp, 'listening');
  });
  afterAll(() => {
    udp.close();
    tcp.close();
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    const dnssec = new DnssecResolver({ POSTLANE_DNS_SERVERS: [`127.0.0.1:${port}`], POSTLANE_DNS_TIMEOUT_MS: 1_000 });

    expect(await dnssec.query('big.dnssec.test', 'A')).toMatchObject({
      kind: 'found',
      secure: true,
      records: [{ type: 'A', data: '192.0.2.9' }],
    });
  });

  it('asks a question once while it is on the wire, however many ask it', async () => {
    const dnssec = new DnssecResolver({ POSTLANE_DNS_SERVERS: [`127.0.0.1:${port}`], POSTLANE_DNS_TIMEOUT_MS: 1_000 });
    const before = udpQuestions;
    const answers = await Promise.all([1, 2, 3].map(() => dnssec.query('shared.dnssec.test', 'A')));

    expect(answers.map((answer) => answer.kind)).toEqual(['found', 'found', 'found']);
    expect(udpQuestions - before).toBe(1);
  });
});
