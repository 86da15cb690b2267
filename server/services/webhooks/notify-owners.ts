import type { Deps } from '../../deps.js';
import { Team } from '../../entities/index.js';
import { type Mailbox, parseMailbox } from '../../mail/address.js';
import { sendNotice } from '../emails/send-email.js';

export interface OwnerNotice {
  kind: 'webhook_failing' | 'webhook_disabled' | 'webhook_backlog';
  subject: string;
  text: string;
}

const mailbox = (value: string): Mailbox | null => {
  const parsed = parseMailbox(value);
  return typeof parsed === 'string' ? null : parsed;
};

/**
 * Emails the team's owners through Postlane's own sending path, from POSTLANE_NOTICE_FROM. A team
 * without owner addresses gets a log line instead, so the sysadmin still hears of it.
 */
export async function notifyOwners(
  deps: Pick<Deps, 'orm' | 'config' | 'clock' | 'emailWriter' | 'logger'>,
  teamId: string,
  notice: OwnerNotice,
): Promise<void> {
  const team = await deps.orm.em.fork().findOne(Team, teamId, { fields: ['ownerEmails'] });
  const owners = (team?.ownerEmails ?? []).map(mailbox).filter((m): m is Mailbox => m !== null);
  if (owners.length === 0) {
    deps.logger.warn(
      { teamId, notice: notice.kind, subject: notice.subject },
      'owner notice not emailed: the team has no owner addresses',
    );
    return;
  }
  await sendNotice(deps, teamId, {
    from: mailbox(deps.config.POSTLANE_NOTICE_FROM)!,
    to: owners,
    cc: [],
    bcc: [],
    replyTo: [],
    subject: notice.subject,
    html: null,
    text: notice.text,
    headers: {},
    attachments: [],
    tags: [{ name: 'postlane_notice', value: notice.kind }],
    scheduledAt: null,
    topicId: null,
    template: null,
  });
  deps.logger.info({ teamId, notice: notice.kind, owners: owners.length }, 'owner notice emailed');
}

/** The notices about one webhook endpoint. */
export const webhookNotices = {
  failing: (url: string, count: number): OwnerNotice => ({
    kind: 'webhook_failing',
    subject: `Webhook deliveries to ${url} are failing`,
    text: `The last ${count} deliveries to your webhook endpoint ${url} all failed after every retry.\n\nCheck that the endpoint is up and answers 2xx. After 20 such failures in a row Postlane disables the endpoint.`,
  }),
  disabled: (url: string, id: string, count: number): OwnerNotice => ({
    kind: 'webhook_disabled',
    subject: `Webhook endpoint ${url} was disabled`,
    text: `Postlane disabled your webhook endpoint ${url} (${id}) after ${count} deliveries in a row failed after every retry.\n\nNo further events are delivered to it, and events from the outage will not be replayed. Re-enable it with PATCH /webhooks/${id} {"status":"enabled"} or \`postlane webhooks enable ${id}\` once it answers again.`,
  }),
  backlog: (url: string, oldest: Date): OwnerNotice => ({
    kind: 'webhook_backlog',
    subject: `Webhook deliveries to ${url} are backing up`,
    text: `Deliveries to your webhook endpoint ${url} are waiting since ${oldest.toISOString()}, more than 6 hours. Events older than 24 hours are dropped.\n\nCheck that the endpoint is up and answers quickly with a 2xx.`,
  }),
};
