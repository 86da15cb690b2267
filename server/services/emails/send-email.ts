import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.js';
import type { IEmail } from '../../entities/index.js';
import type { Mailbox } from '../../mail/address.js';
import { createMessageId } from '../../mail/mime.js';
import { authorizeSenders, type Sender } from '../domains/authorize-sender.js';
import type { QueuedEmailRow } from './queued-email-writer.js';

export interface SendEmailInput {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string | null; content: string }[];
  tags: { name: string; value: string }[];
  scheduledAt: Date | null;
}

function toQueuedRow(deps: Pick<Deps, 'clock'>, teamId: string, input: SendEmailInput, region: string): QueuedEmailRow {
  const id = randomUUID();
  const formatted = (list: Mailbox[]) => list.map((m) => m.formatted);
  return {
    id,
    team_id: teamId,
    from: input.from.formatted,
    to: formatted(input.to),
    cc: formatted(input.cc),
    bcc: formatted(input.bcc),
    reply_to: formatted(input.replyTo),
    subject: input.subject,
    html: input.html,
    text: input.text,
    headers: input.headers,
    tags: input.tags,
    attachments: input.attachments.map((a) => ({ filename: a.filename, content_type: a.contentType, content: a.content })),
    region,
    message_id: createMessageId(id, input.from.address),
    created_at: deps.clock().toISOString(),
    scheduled_at: input.scheduledAt?.toISOString() ?? null,
    recipients: (['to', 'cc', 'bcc'] as const).flatMap((kind) => input[kind].map((mailbox) => ({ kind, address: mailbox.address }))),
  };
}

type SendDeps = Pick<Deps, 'config' | 'clock' | 'emailWriter' | 'orm' | 'providers' | 'senderDomains'>;

/** Commits the email, its recipients and its send job together; workers are woken after the commit. */
export async function sendEmail(deps: SendDeps, sender: Sender, input: SendEmailInput): Promise<Pick<IEmail, 'id'>> {
  const [authorized] = await authorizeSenders(deps, sender, [input.from.address]);
  const row = toQueuedRow(deps, sender.teamId, input, authorized!.region);
  await deps.emailWriter.write(row);
  return { id: row.id };
}

/** A batch: every email commits, or none does. `batchIndexes`: each email's position in the request, for messages. */
export async function sendEmails(deps: SendDeps, sender: Sender, inputs: SendEmailInput[], batchIndexes = inputs.map((_, index) => index)): Promise<Pick<IEmail, 'id'>[]> {
  const senders = await authorizeSenders(deps, sender, inputs.map((input) => input.from.address), { batchIndexes });
  const rows = inputs.map((input, index) => toQueuedRow(deps, sender.teamId, input, senders[index]!.region));
  if (rows.length > 0) await deps.emailWriter.writeTogether(rows);
  return rows.map((row) => ({ id: row.id }));
}

/** Wakes a worker for an email already in the outbox (retries, the sweeper); a failure is left to the sweeper. */
export async function enqueueSend(deps: Pick<Deps, 'jobs' | 'logger'>, email: Pick<IEmail, 'id' | 'sendAfter'>): Promise<void> {
  try {
    await deps.jobs.enqueue('email.send', { emailId: email.id }, email.sendAfter);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, emailId: email.id }, 'enqueue failed; the outbox sweeper will pick the email up');
  }
}
