import { ReceivedAttachment } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import type { DownloadableAttachment } from '../downloads/downloadable.js';
import { ensureReceivedEmailExists } from './get-received-email.js';
import { downloadableReceivedAttachment, type ReceivingDeps } from './received-attachments.js';

export async function getReceivedAttachment(
  deps: ReceivingDeps,
  teamId: string,
  emailId: string,
  attachmentId: string,
): Promise<DownloadableAttachment> {
  await ensureReceivedEmailExists(deps, teamId, emailId);
  const attachment = await deps.orm.em.findOne(ReceivedAttachment, { id: attachmentId, email: emailId });
  if (!attachment) throw notFound('Attachment');
  return downloadableReceivedAttachment(deps, attachment);
}
