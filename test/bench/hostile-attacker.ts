/**
 * The attacking side of hostile.bench.ts, in a process of its own so that building and writing its
 * megabytes does not run on the event loop under test: `connections` SMTP sessions to the listener
 * at `port`, each from a client address of its own (127.0.0.11, .12, …: one attacker per IP, held
 * to the listener's per-IP limits as any attacker on the Internet is), each sending the attacks of
 * issue 33 in turn until `seconds` have passed, and trying again a moment after each refusal by the
 * limits: as much as they let through. Prints `{ accepted, acceptedBytes, replies451, limited, other }`
 * as JSON: `replies451` counts 451s to DATA (a leaked budget answers so), `limited` refusals by the
 * per-IP limits.
 *
 *   node --import tsx test/bench/hostile-attacker.ts <port> <domain> <seconds> <connections>
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataWire, smtpConnect } from '../support/smtp-client.js';

const [port, domain, seconds, connections] = process.argv.slice(2);
const head = `From: a@elsewhere.test\r\nTo: desk@${domain}\r\nSubject: hostile\r\n`;
const part = `--b\r\nContent-Type: text/plain\r\n\r\n${'y'.repeat(958)}\r\n`;
const image = randomBytes(150_000).toString('base64').replace(/.{76}/g, '$&\r\n');
// In wire form once: dot-stuffing a megabyte per message would cost this process the CPU the listener shares with it.
const attacks = [
  `${head}X-F: a${'\r\n b'.repeat(60_000)}\r\n\r\nbody\r\n`,
  `${Array.from(
    { length: 300 },
    (_, i) =>
      `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=elsewhere.test; s=sel; l=${1000 + i}; h=from:to:subject; bh=${Buffer.alloc(32, i).toString('base64')}; b=${randomBytes(16).toString('base64')}\r\n`,
  ).join('')}${head}\r\n${`${'x'.repeat(998)}\r\n`.repeat(1050)}`,
  `${head}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${part.repeat(1000)}--b--\r\n`,
  `From: a@elsewhere.test\r\nTo: desk@${domain}\r\nSubject: cid amplification\r\nMIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=r\r\n\r\n--r\r\nContent-Type: text/html\r\n\r\n${'<img src="cid:x">'.repeat(400)}\r\n--r\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\nContent-ID: <x>\r\n\r\n${image}\r\n--r--\r\n`,
].map((attack) => new DataWire(attack));

const endsAt = performance.now() + Number(seconds) * 1000;
const counts = { accepted: 0, acceptedBytes: 0, replies451: 0, limited: 0, other: 0 };
/** How long an attacker the limits refused waits before it asks again. */
const RETRY_MS = 250;
await Promise.all(
  Array.from({ length: Number(connections) }, async (_, lane) => {
    const client = await smtpConnect(Number(port), { localAddress: `127.0.0.${11 + lane}` });
    try {
      await client.greeting;
      await client.command('EHLO attacker.bench.test');
      for (let turn = lane; performance.now() < endsAt; turn++) {
        if ((await client.command('MAIL FROM:<attacker@elsewhere.test>')).code !== 250) {
          counts.limited++;
          turn--;
          await sleep(RETRY_MS);
          continue;
        }
        await client.command(`RCPT TO:<desk@${domain}>`);
        const attack = attacks[turn % attacks.length]!;
        const reply = await client.data(attack, 120_000);
        if (reply.code === 250) {
          counts.accepted++;
          counts.acceptedBytes += attack.wire.length;
        } else if (reply.code === 451) counts.replies451++;
        else counts.other++;
      }
      await client.command('QUIT');
    } finally {
      client.close();
    }
  }),
);
process.stdout.write(JSON.stringify(counts));
