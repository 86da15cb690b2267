import { newId } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { ApiError } from '../../errors.js';
import type { Mailbox } from '../../mail/address.js';
import type { IEmail } from '../../entities/index.js';
import { createMessageId } from '../../mail/mime.js';
import { authorizeSenders, type Sender } from '../domains/authorize-sender.js';
import { withTeamQuota } from '../usage/team-quota.js';
import { admitSends } from './admit-sends.js';
import type { IdempotencyRecord, QueuedEmailRow } from '../outbox/queued-email-writer.js';
import type { AdmittedEmail, IdempotentAnswer, SendEmailInput } from './send-input.js';

const recordOf = <T>(answer: IdempotentAnswer<T> | undefined, result: T): IdempotencyRecord | undefined => {
  if (!answer) return undefined;
  const { present, ...claim } = answer;
  return { ...claim, response: present(result) };
};

/** The outbox row of an admitted email, with a fresh id and Message-ID. */
export function toQueuedRow(
  deps: Pick<Deps, 'clock'>,
  teamId: string,
  input: AdmittedEmail,
  region: string,
  parkUntil: Date | null,
): QueuedEmailRow {
  const id = newId();
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
    attachments: input.attachments.map((a) => ({
      filename: a.filename,
      content_type: a.contentType,
      content: a.content,
    })),
    region,
    message_id: createMessageId(id, input.from.address),
    created_at: deps.clock().toISOString(),
    scheduled_at: input.scheduledAt?.toISOString() ?? null,
    topic_id: input.topicId,
    park_until: parkUntil?.toISOString() ?? null,
    recipients: (['to', 'cc', 'bcc'] as const).flatMap((kind) =>
      input[kind].map((mailbox) => ({ kind, address: mailbox.address })),
    ),
    ...(input.rawMime ? { raw_mime: input.rawMime.toString('base64') } : {}),
  };
}

type SendDeps = Pick<
  Deps,
  'config' | 'clock' | 'emailWriter' | 'orm' | 'secrets' | 'providers' | 'senderDomains' | 'sendStates'
>;

/** Commits the email, its recipients and a drain job for its region together; workers are woken after the commit. */
export async function sendEmail(
  deps: SendDeps,
  sender: Sender,
  input: SendEmailInput,
  idempotent?: IdempotentAnswer<Pick<IEmail, 'id'>>,
): Promise<Pick<IEmail, 'id'>> {
  const [authorized] = await authorizeSenders(deps, sender, [input.from.address]);
  return withTeamQuota(deps, sender.teamId, async (admit) => {
    const [admitted] = await admitSends(deps, sender.teamId, [input]);
    if (admitted instanceof ApiError) throw admitted;
    const row = toQueuedRow(deps, sender.teamId, admitted!, authorized!.region, await admit(1));
    const sent = { id: row.id };
    await deps.emailWriter.write(row, recordOf(idempotent, sent));
    return sent;
  });
}

export interface BatchItem {
  /** The email's place in the request, which refusals name. */
  index: number;
  input: SendEmailInput;
}

export interface SentEmails {
  sent: Pick<IEmail, 'id'>[];
  refused: { index: number; error: ApiError }[];
}

/**
 * A batch. A `from` the sender may not use refuses the whole batch. Then, `strict`: the first
 * refused email refuses the batch, named by its index, and every other email commits together
 * or none does; `permissive`: refused emails are listed and skipped.
 */
export async function sendEmails(
  deps: SendDeps,
  sender: Sender,
  items: BatchItem[],
  mode: 'strict' | 'permissive',
  idempotent?: IdempotentAnswer<SentEmails>,
): Promise<SentEmails> {
  const senders = await authorizeSenders(
    deps,
    sender,
    items.map((item) => item.input.from.address),
    { batchIndexes: items.map((item) => item.index) },
  );
  return withTeamQuota(deps, sender.teamId, async (admit) => {
    const admitted = await admitSends(
      deps,
      sender.teamId,
      items.map((item) => item.input),
    );
    const refused = items.flatMap(({ index }, at) =>
      admitted[at] instanceof ApiError ? [{ index, error: admitted[at] }] : [],
    );
    if (mode === 'strict' && refused[0]) {
      const { index, error } = refused[0];
      throw new ApiError(error.statusCode, error.name, `${index}: ${error.message}`);
    }
    const accepted = admitted.flatMap((input, at) =>
      input instanceof ApiError ? [] : [{ input, region: senders[at]!.region }],
    );
    // The quota takes or refuses the batch as a whole.
    const parkUntil = await admit(accepted.length);
    const rows = accepted.map(({ input, region }) => toQueuedRow(deps, sender.teamId, input, region, parkUntil));
    const result = { sent: rows.map((row) => ({ id: row.id })), refused };
    // A key is stored even when every email was refused: a repeat gets the same list of refusals.
    if (rows.length > 0 || idempotent) await deps.emailWriter.writeTogether(rows, recordOf(idempotent, result));
    return result;
  });
}

/**
 * Postlane's own mail to a team's owners (webhook trouble): it comes from the appliance, not from
 * the team, so the team's sender rule, quota and sending pause do not apply; it goes out in the
 * default region and is listed with the team's emails.
 */
export async function sendNotice(
  deps: Pick<Deps, 'config' | 'clock' | 'emailWriter'>,
  teamId: string,
  input: AdmittedEmail,
): Promise<Pick<IEmail, 'id'>> {
  const row = toQueuedRow(deps, teamId, input, deps.config.POSTLANE_DEFAULT_REGION, null);
  await deps.emailWriter.write(row);
  return { id: row.id };
}
