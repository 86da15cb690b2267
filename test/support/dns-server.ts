import dns2 from 'dns2';

const { Packet } = dns2;

type RecordType = 'TXT' | 'CNAME' | 'MX' | 'A' | 'AAAA' | 'PTR';
/** What a name answers for one type: values, or a scripted fault. */
export type ZoneEntry = string[] | { fault: 'timeout' | 'servfail' };

const TYPES: Record<RecordType, number> = {
  TXT: Packet.TYPE.TXT,
  CNAME: Packet.TYPE.CNAME,
  MX: Packet.TYPE.MX,
  A: Packet.TYPE.A,
  AAAA: Packet.TYPE.AAAA,
  PTR: Packet.TYPE.PTR,
};
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

/** TXT strings are at most 255 bytes each; a long value (a DKIM key) goes as several, as zone files split it. */
const chunks = (value: string) => value.match(/[\s\S]{1,255}/g) ?? [''];

/**
 * A real DNS server on loopback (UDP and TCP on one port), answering from a zone the test edits:
 * right or wrong values, nothing (NXDOMAIN / no data), SERVFAIL, or silence (a timeout). `host`
 * puts it on another address of this machine, for hosts of a test network to ask.
 */
export async function startDnsServer({ host = '127.0.0.1' }: { host?: string } = {}) {
  const zone = new Map<string, ZoneEntry>();
  const ttls = new Map<string, number>();
  const key = (type: RecordType, name: string) => `${type} ${name.toLowerCase().replace(/\.$/, '')}`;
  const answer = (request: dns2.Packet, send: dns2.Send) => {
    const response = Packet.createResponseFromRequest(request);
    const question = request.questions[0]!;
    const name = question.name.toLowerCase();
    const type = (Object.keys(TYPES) as RecordType[]).find((t) => TYPES[t] === question.type);
    const entry = type ? zone.get(key(type, name)) : undefined;
    if (entry && !Array.isArray(entry)) {
      if (entry.fault === 'timeout') return;
      response.header.rcode = RCODE_SERVFAIL;
      return send(response);
    }
    if (!entry) {
      const nameExists = [...zone.keys()].some((k) => k.endsWith(` ${name}`));
      if (!nameExists) response.header.rcode = RCODE_NXDOMAIN;
      return send(response);
    }
    for (const value of entry) {
      const ttl = ttls.get(key(type!, name)) ?? 60;
      const base = { name: question.name, type: TYPES[type!], class: Packet.CLASS.IN, ttl };
      if (type === 'TXT') response.answers.push({ ...base, data: chunks(value) });
      else if (type === 'CNAME' || type === 'PTR') response.answers.push({ ...base, domain: value });
      else if (type === 'A' || type === 'AAAA') response.answers.push({ ...base, address: value });
      else {
        const [priority, exchange] = value.split(' ');
        response.answers.push({ ...base, priority: Number(priority), exchange });
      }
    }
    send(response);
  };
  const { udp, tcp, port } = await bindBoth(answer, host);
  return {
    port,
    /** The value for POSTLANE_DNS_SERVERS. */
    address: `${host}:${port}`,
    /** Records answer with a TTL of 60 s unless given another. */
    set(type: RecordType, name: string, entry: ZoneEntry, ttlSeconds = 60) {
      zone.set(key(type, name), entry);
      ttls.set(key(type, name), ttlSeconds);
    },
    remove(type: RecordType, name: string) {
      zone.delete(key(type, name));
      ttls.delete(key(type, name));
    },
    async close() {
      await Promise.all([udp.close(), tcp.close()]);
    },
  };
}

/** dns2's listen resolves on 'listening' only; a bind error is emitted instead, and would leave it waiting. */
const listenOrFail = (server: dns2.Server, options: dns2.ListenOptions) =>
  new Promise<dns2.Addresses>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options).then(resolve, reject);
  });

/**
 * UDP on a free port, and TCP on the same one, so an answer too long for UDP, retried over TCP,
 * reaches us too. The UDP port may be taken for TCP (an outgoing connection's ephemeral port, with
 * many tests running): then both are tried again on another.
 */
async function bindBoth(handle: NonNullable<dns2.ServerOptions['handle']>, address: string) {
  for (let attempt = 1; ; attempt += 1) {
    const udp = dns2.createServer({ udp: true, handle });
    const port = (await listenOrFail(udp, { udp: { port: 0, address, type: 'udp4' } })).udp!.port;
    const tcp = dns2.createServer({ tcp: true, handle });
    try {
      await listenOrFail(tcp, { tcp: { port, address } });
      return { udp, tcp, port };
    } catch (err) {
      await udp.close();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 5) throw err;
    }
  }
}
