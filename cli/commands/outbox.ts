import type { Command } from 'commander';
import { getCapturedMessage } from '../../server/services/outbox/get-captured-message.js';
import { listCapturedMessages } from '../../server/services/outbox/list-captured-messages.js';
import type { ICapturedMessage } from '../../server/entities/index.js';
import { command, withDatabase } from '../lib/context.js';
import { limitOption } from '../lib/options.js';
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

export function registerOutbox(program: Command): void {
  const outbox = program
    .command('outbox')
    .description('mail kept by the embedded capture provider instead of being relayed');

  outbox
    .command('list', { isDefault: true })
    .description('list captured messages, newest first')
    .addOption(limitOption(20))
    .action(
      command(async (options: { limit: number }, cmd: Command) => {
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
      }),
    );

  outbox
    .command('show')
    .description('print one captured message as raw MIME')
    .argument('<id>', 'the email id POST /emails answered, the captured message id, or the Message-ID')
    .action(
      command(async (id: string, _options: unknown, cmd: Command) => {
        const message = await withDatabase(({ orm }) => getCapturedMessage({ orm }, id));
        if (cmd.optsWithGlobals().json) return printJson({ ...summary(message), raw: message.raw });
        process.stdout.write(message.raw.endsWith('\n') ? message.raw : `${message.raw}\n`);
      }),
    );
}
