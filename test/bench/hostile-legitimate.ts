/**
 * The legitimate side of hostile.bench.ts, in a process of its own so that the appliance's event loop
 * serves and does nothing else: `lanes` SMTP connections sending the message in `messageFile` to
 * `recipient` while `seconds` pass (each lane moves to a new client address of 127.`phase`.lane.n
 * after `perAddress` messages, half of what one address may send at once, as mail from many senders
 * does), `POST /emails` in a loop, `/health` every 20 ms, and with
 * `--fetch-cid` each received message titled `cid amplification` fetched once through
 * `GET /emails/receiving/{id}`, as the team's `email.received` handler would. Prints its counts and
 * the `/health` latencies' p99 and maximum as JSON.
 *
 *   node --import tsx test/bench/hostile-legitimate.ts <settings as JSON>
 */
import { readFileSync } from 'node:fs';
import { DataWire, smtpConnect } from '../support/smtp-client.js';

interface Settings {
  smtpPort: number;
  apiUrl: string;
  token: string;
  messageFile: string;
  sender: string;
  recipient: string;
  seconds: number;
  lanes: number;
  phase: number;
  perAddress: number;
  fetchCid: boolean;
}

const settings = JSON.parse(process.argv[2]!) as Settings;
const message = new DataWire(readFileSync(settings.messageFile, 'latin1'));
const auth = { authorization: `Bearer ${settings.token}` };
const endsAt = performance.now() + settings.seconds * 1000;
const running = () => performance.now() < endsAt;
const counts = { accepted: 0, apiEmails: 0, replies451: 0, other: 0, cidFetches: 0, cidLargestBytes: 0 };
const health: number[] = [];

async function lane(laneNumber: number) {
  for (let address = 1; running() && address < 255; address++) {
    const client = await smtpConnect(settings.smtpPort, {
      localAddress: `127.${settings.phase}.${laneNumber + 1}.${address}`,
    });
    try {
      await client.greeting;
      await client.command('EHLO client.bench.test');
      for (let sent = 0; running() && sent < settings.perAddress; sent++) {
        await client.command(`MAIL FROM:<${settings.sender}>`);
        await client.command(`RCPT TO:<${settings.recipient}>`);
        const reply = await client.data(message, 120_000);
        if (reply.code === 250) counts.accepted++;
        else if (reply.code === 451) counts.replies451++;
        else counts.other++;
      }
      await client.command('QUIT');
    } finally {
      client.close();
    }
  }
}

async function probeHealth() {
  while (running()) {
    const started = performance.now();
    await fetch(`${settings.apiUrl}/health`).then((response) => response.arrayBuffer());
    health.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function sendThroughApi() {
  while (running()) {
    const response = await fetch(`${settings.apiUrl}/emails`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'Bench <bench@example.com>',
        to: ['user@example.com'],
        subject: 'Hi',
        html: '<p>Hi</p>',
      }),
    });
    await response.arrayBuffer();
    if (response.status === 200) counts.apiEmails++;
    else counts.other++;
  }
}

async function fetchCidMessages() {
  const fetched = new Set<string>();
  while (running()) {
    const listing = await fetch(`${settings.apiUrl}/emails/receiving?limit=100`, { headers: auth });
    const { data } = (await listing.json()) as { data: { id: string; subject: string }[] };
    const fresh = data.filter((email) => email.subject === 'cid amplification' && !fetched.has(email.id));
    for (const { id } of fresh) {
      fetched.add(id);
      const response = await fetch(`${settings.apiUrl}/emails/receiving/${id}`, { headers: auth });
      counts.cidLargestBytes = Math.max(counts.cidLargestBytes, (await response.arrayBuffer()).byteLength);
      counts.cidFetches++;
    }
    if (fresh.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

await Promise.all([
  ...Array.from({ length: settings.lanes }, (_, laneNumber) => lane(laneNumber)),
  probeHealth(),
  sendThroughApi(),
  ...(settings.fetchCid ? [fetchCidMessages()] : []),
]);
const sorted = health.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    ...counts,
    healthP99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
    healthMaxMs: sorted.at(-1) ?? 0,
  }),
);
