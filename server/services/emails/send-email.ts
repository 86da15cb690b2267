import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { Email, EmailRecipient, type IEmail, Team } from '../../entities/index.js';
import type { Mailbox } from '../../mail/address.js';
import { createMessageId } from '../../mail/mime.js';

export interface SendEmailInput {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  subject: string;
  html: string | null;
  text: string | null;
}

/**
 * The outbox write: the email is committed as `queued` together with its recipients; only after
 * the commit is the send job enqueued. A lost enqueue is harmless, the sweeper finds the row.
 */
export async function sendEmail(deps: Deps, teamId: string, input: SendEmailInput): Promise<IEmail> {
  const em = deps.orm.em;
  const id = randomUUID();
  const now = deps.clock();
  const formatted = (list: Mailbox[]) => list.map((m) => m.formatted);
  const email = em.create(Email, {
    id,
    createdAt: now,
    updatedAt: now,
    team: em.getReference(Team, teamId),
    from: input.from.formatted,
    to: formatted(input.to),
    cc: formatted(input.cc),
    bcc: formatted(input.bcc),
    replyTo: formatted(input.replyTo),
    subject: input.subject,
    html: input.html,
    text: input.text,
    region: deps.config.POSTLANE_DEFAULT_REGION,
    messageId: createMessageId(id, input.from.address),
    status: 'queued',
    lastEvent: 'queued',
    sendAfter: now,
  });
  for (const [kind, list] of [['to', input.to], ['cc', input.cc], ['bcc', input.bcc]] as const) {
    for (const mailbox of list) em.create(EmailRecipient, { createdAt: now, email, kind, address: mailbox.address, status: 'pending' });
  }
  await em.flush();
  await enqueueSend(deps, email);
  return email;
}

/** After the commit; a failure is logged and left to the sweeper, never reported to the client. */
export async function enqueueSend(deps: Pick<Deps, 'jobs' | 'logger'>, email: Pick<IEmail, 'id' | 'sendAfter'>): Promise<void> {
  try {
    await deps.jobs.enqueue('email.send', { emailId: email.id }, email.sendAfter);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, emailId: email.id }, 'enqueue failed; the outbox sweeper will pick the email up');
  }
}
