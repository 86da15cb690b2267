import { type Page, type PageQuery, paginateInOrder } from '../../db/paginate.js';
import type { DownloadableAttachment } from '../downloads/downloadable.js';
import { ensureReceivedEmailExists } from './get-received-email.js';
import { attachmentsOf, downloadableReceivedAttachment, type ReceivingDeps } from './received-attachments.js';

/** A received email's attachments in the order the message carries them, with download URLs. */
export async function listReceivedAttachments(
  deps: ReceivingDeps,
  teamId: string,
  emailId: string,
  page: PageQuery,
): Promise<Page<DownloadableAttachment>> {
  await ensureReceivedEmailExists(deps, teamId, emailId);
  const { data, hasMore } = paginateInOrder((await attachmentsOf(deps.orm.em, [emailId])).get(emailId) ?? [], page);
  return { data: data.map((attachment) => downloadableReceivedAttachment(deps, attachment)), hasMore };
}
