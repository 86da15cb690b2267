import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { ApiError } from '../../errors.js';
import type { IEmail } from '../../entities/index.js';
import type { Mailbox } from '../../mail/address.js';
import { createMessageId } from '../../mail/mime.js';
import { withTeamQuota } from '../usage/team-quota.js';
import { admitSends } from './admit-sends.js';
import type { QueuedEmailRow } from './queued-email-writer.js';

export interface SendEmailInput {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  /** Null only on a send with a template, whose subject then fills it. */
  subject: string | null;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string | null; content: string }[];
  tags: { name: string; value: string }[];
  scheduledAt: Date | null;
  topicId: string | null;
  template: { id: string; variables: Record<string, string | number> } | null;
}

/** An email as it will be written: its template rendered, its subject settled. */
export type AdmittedEmail = SendEmailInput & { subject: string };

/** The outbox row of an admitted email, with a fresh id and Message-ID. */
export function toQueuedRow(deps: Pick<Deps, 'config' | 'clock'>, teamId: string, input: AdmittedEmail, parkUntil: Date | null): QueuedEmailRow {
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
    region: deps.config.POSTLANE_DEFAULT_REGION,
    message_id: createMessageId(id, input.from.address),
    created_at: deps.clock().toISOString(),
    scheduled_at: input.scheduledAt?.toISOString() ?? null,
    topic_id: input.topicId,
    park_until: parkUntil?.toISOString() ?? null,
    recipients: (['to', 'cc', 'bcc'] as const).flatMap((kind) => input[kind].map((mailbox) => ({ kind, address: mailbox.address }))),
  };
}

type SendDeps = Pick<Deps, 'config' | 'clock' | 'emailWriter' | 'orm' | 'secrets'>;

/** Commits the email, its recipients and its send job together; workers are woken after the commit. */
export async function sendEmail(deps: SendDeps, teamId: string, input: SendEmailInput): Promise<Pick<IEmail, 'id'>> {
  return withTeamQuota(deps, teamId, async (admit) => {
    const [admitted] = await admitSends(deps, teamId, [input]);
    if (admitted instanceof ApiError) throw admitted;
    const row = toQueuedRow(deps, teamId, admitted!, await admit(1));
    await deps.emailWriter.write(row);
    return { id: row.id };
  });
}

export interface BatchItem {
  /** The email's place in the request, which refusals name. */
  index: number;
  input: SendEmailInput;
}

/**
 * A batch. `strict`: the first refused email refuses the batch, named by its index, and every
 * other email commits together or none does. `permissive`: refused emails are listed and skipped.
 */
export async function sendEmails(deps: SendDeps, teamId: string, items: BatchItem[], mode: 'strict' | 'permissive'): Promise<{ sent: Pick<IEmail, 'id'>[]; refused: { index: number; error: ApiError }[] }> {
  return withTeamQuota(deps, teamId, async (admit) => {
    const admitted = await admitSends(deps, teamId, items.map((item) => item.input));
    const refused = items.flatMap(({ index }, at) => (admitted[at] instanceof ApiError ? [{ index, error: admitted[at] }] : []));
    if (mode === 'strict' && refused[0]) {
      const { index, error } = refused[0];
      throw new ApiError(error.statusCode, error.name, `${index}: ${error.message}`);
    }
    const accepted = admitted.filter((input): input is AdmittedEmail => !(input instanceof ApiError));
    // The quota takes or refuses the batch as a whole.
    const parkUntil = await admit(accepted.length);
    const rows = accepted.map((input) => toQueuedRow(deps, teamId, input, parkUntil));
    if (rows.length > 0) await deps.emailWriter.writeTogether(rows);
    return { sent: rows.map((row) => ({ id: row.id })), refused };
  });
}

/** Wakes a worker for an email already in the outbox (retries, the sweeper); a failure is left to the sweeper. */
export async function enqueueSend(deps: Pick<Deps, 'jobs' | 'logger'>, email: Pick<IEmail, 'id' | 'sendAfter'>): Promise<void> {
  try {
    await deps.jobs.enqueue('email.send', { emailId: email.id }, email.sendAfter);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, emailId: email.id }, 'enqueue failed; the outbox sweeper will pick the email up');
  }
}
