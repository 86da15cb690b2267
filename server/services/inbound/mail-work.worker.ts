import { DnsResolver } from '../../dns/resolver.js';
import type { AuthVerdicts } from '../../entities/index.js';
import { authenticateMessage } from './authenticate-message.js';
import type { MailWorkSettings, ParseResult, WorkerTask } from './mail-work.js';
import { parseReceived } from './parse-received.js';

// mailauth's DKIM verifier prints `TOTAL … EXPECTING …` with console.log for every signature whose
// `l=` does not match the body; a worker's stdout is the process's, whose lines must all be JSON logs.
// Nothing this thread runs has anything to say on stdout.
console.log = console.info = console.debug = () => {};

let resolver: { key: string; dns: DnsResolver } | null = null;

/** One resolver per thread, for the process's DNS settings (they are the same for every task). */
function dnsFor(settings: MailWorkSettings): DnsResolver {
  const key = `${settings.POSTLANE_DNS_SERVERS.join(',')}/${settings.POSTLANE_DNS_TIMEOUT_MS}`;
  if (resolver?.key !== key) resolver = { key, dns: new DnsResolver(settings) };
  return resolver.dns;
}

/** A task of the mail worker pool: what `MailWork` sends is what runs here, beside the event loop. */
export default async function runMailWork(task: WorkerTask): Promise<AuthVerdicts | ParseResult> {
  task.started.postMessage(null);
  task.started.close();
  const raw = Buffer.from(task.raw.buffer, task.raw.byteOffset, task.raw.byteLength);
  if (task.kind === 'authenticate')
    return authenticateMessage({ dns: dnsFor(task.settings), config: task.settings }, raw, task.envelope);
  const { headers, ...parsed } = await parseReceived(raw);
  // A structured clone keeps own properties but not the null prototype: the headers travel as entries.
  return { ...parsed, headers: Object.entries(headers) };
}
