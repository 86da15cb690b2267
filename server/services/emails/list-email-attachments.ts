import { type Page, type PageQuery, paginateInOrder } from '../../db/paginate.js';
import { EmailAttachment } from '../../entities/index.js';
import type { DownloadableAttachment } from '../downloads/downloadable.js';
import { ATTACHMENT_METADATA, type AttachmentDeps, describeSentAttachment } from './get-email-attachment.js';
import { ensureEmailExists } from './get-email.js';

/** A sent email's attachments in the order the email carries them (at most 100, so paged in memory). */
export async function listEmailAttachments(
  deps: AttachmentDeps,
  teamId: string,
  emailId: string,
  page: PageQuery,
): Promise<Page<DownloadableAttachment>> {
  await ensureEmailExists(deps, teamId, emailId);
  const attachments = await deps.orm.em.find(
    EmailAttachment,
    { email: emailId },
    { fields: [...ATTACHMENT_METADATA], orderBy: { position: 'asc' } },
  );
  const { data, hasMore } = paginateInOrder(attachments, page);
  return { data: data.map((attachment) => describeSentAttachment(deps, emailId, attachment)), hasMore };
}
