import { getPriority, setPriority } from 'node:os';
import { workerData } from 'piscina';
import { DnssecResolver } from '../../dns/dnssec-resolver.js';
import { nodeStyleResolver } from '../../dns/node-style-resolver.js';
import { authenticateMessage } from './authenticate-message.js';
import type { MailWorkerData, MailWorkSettings, WorkerResult, WorkerTask } from './mail-work.js';
import { parseReceived } from './parse-received.js';
import { installPublicKeyMemo } from './public-key-memo.js';

// mailauth's DKIM verifier prints `TOTAL … EXPECTING …` with console.log for every signature whose
// `l=` does not match the body; a worker's stdout is the process's, whose lines must all be JSON logs.
// Nothing this thread runs has anything to say on stdout.
console.log = console.info = console.debug = () => {};

// A DKIM key is parsed once per thread, not twice per signature (see publicKeyMemo).
installPublicKeyMemo();

// On Linux the nice value set here is this thread's alone (the lane for large messages runs at a lower
// priority), counted from the one it was started with: lowering a priority needs no privilege.
const { niceness } = workerData as MailWorkerData;
if (niceness !== 0) setPriority(Math.min(19, getPriority() + niceness));

let resolver: { key: string; dns: ReturnType<typeof nodeStyleResolver> } | null = null;

/** One resolver per thread, for the process's DNS settings (they are the same for every task), each answer kept for its TTL. */
function dnsFor(settings: MailWorkSettings) {
  const key = `${settings.POSTLANE_DNS_SERVERS.join(',')}/${settings.POSTLANE_DNS_TIMEOUT_MS}`;
  if (resolver?.key !== key) resolver = { key, dns: nodeStyleResolver(new DnssecResolver(settings)) };
  return resolver.dns;
}

/** A task of the mail worker pool: what `MailWork` sends is what runs here, beside the event loop. */
export default async function runMailWork(task: WorkerTask): Promise<WorkerResult> {
  Atomics.store(task.startedAt, 0, BigInt(Date.now()));
  const raw = Buffer.from(task.raw.buffer, task.raw.byteOffset, task.raw.byteLength);
  // Side by side: authentication mostly waits on DNS, parsing is CPU work.
  const [verdicts, parsed] = await Promise.all([
    task.authenticate &&
      authenticateMessage({ dns: dnsFor(task.settings), config: task.settings }, raw, task.authenticate),
    task.parse && parseReceived(raw),
  ]);
  return {
    ...(verdicts && { verdicts }),
    // A structured clone keeps own properties but not the null prototype: the headers travel as entries.
    ...(parsed && { parsed: { ...parsed, headers: Object.entries(parsed.headers) } }),
  };
}
