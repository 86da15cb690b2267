import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type IReceivedEmail, ReceivedEmail } from '../../entities/index.js';
import { attachmentsOf, describeReceivedAttachment, type ReceivedAttachmentInfo } from './received-attachments.js';

export interface ReceivedEmailListItem {
  email: IReceivedEmail;
  attachments: ReceivedAttachmentInfo[];
}

/** The team's received emails, newest first, each with its attachments' metadata (as Resend lists them); bodies and headers not loaded. */
export async function listReceivedEmails(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
): Promise<Page<ReceivedEmailListItem>> {
  const { data, hasMore } = await paginate(deps.orm.em, ReceivedEmail, { team: teamId }, page, [
    'html',
    'text',
    'headers',
  ]);
  const attachments = await attachmentsOf(
    deps.orm.em,
    data.map((email) => email.id),
  );
  return {
    data: data.map((email) => ({
      email,
      attachments: (attachments.get(email.id) ?? []).map(describeReceivedAttachment),
    })),
    hasMore,
  };
}
