import type { Command } from 'commander';
import { getCapturedMessage } from '../../server/services/capture/get-captured-message.js';
import { listCapturedMessages } from '../../server/services/capture/list-captured-messages.js';
import type { ICapturedMessage } from '../../server/entities/index.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderTable } from '../lib/render.js';

const summary = (m: ICapturedMessage) => ({
  id: m.id,
  created_at: m.createdAt.toISOString(),
  region: m.region,
  message_id: m.messageId,
  from: m.envelopeFrom,
  to: m.envelopeTo,
  subject: m.subject,
});

export async function list(options: { limit: number }, cmd: Command): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const page = await listCapturedMessages({ orm }, { limit: options.limit });
    return page.data.map(summary);
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['CAPTURED', 'MESSAGE-ID', 'FROM', 'TO', 'SUBJECT'],
    rows: rows.map((m) => [m.created_at, m.message_id, m.from, m.to.join(', '), m.subject]),
    empty: 'No captured mail yet.',
  });
}

export async function show(id: string, _options: unknown, cmd: Command): Promise<void> {
  const message = await withDatabase(({ orm }) => getCapturedMessage({ orm }, id));
  if (cmd.optsWithGlobals().json) return printJson({ ...summary(message), raw: message.raw });
  process.stdout.write(message.raw.endsWith('\n') ? message.raw : `${message.raw}\n`);
}
