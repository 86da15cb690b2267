import { detectMimeType } from 'nodemailer/lib/mime-funcs/mime-types';
import type { Deps } from '../../deps.js';
import { EmailAttachment, type IEmailAttachment } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { signDownload } from '../downloads/download-token.js';
import { type DownloadableAttachment, safeContentType } from '../downloads/downloadable.js';
import { ensureEmailExists } from './get-email.js';

export type AttachmentDeps = Pick<Deps, 'orm' | 'config' | 'secrets' | 'clock'>;

/** The columns the endpoints show: the bytes stay in the database until someone downloads them. */
export const ATTACHMENT_METADATA = ['id', 'createdAt', 'position', 'filename', 'contentType', 'size'] as const;

/**
 * A sent attachment as sent: its content type is the one given, or the one the message was
 * composed with (from the file name); sent attachments are never inline (`content_id` is refused).
 */
export function describeSentAttachment(
  deps: AttachmentDeps,
  emailId: string,
  attachment: Pick<IEmailAttachment, (typeof ATTACHMENT_METADATA)[number]>,
): DownloadableAttachment {
  return {
    id: attachment.id,
    filename: attachment.filename,
    contentType: safeContentType(attachment.contentType ?? detectMimeType(attachment.filename)),
    contentDisposition: 'attachment',
    contentId: null,
    size: attachment.size,
    download: signDownload(deps, { kind: 'sent_attachment', emailId, attachmentId: attachment.id }),
  };
}

export async function getEmailAttachment(
  deps: AttachmentDeps,
  teamId: string,
  emailId: string,
  attachmentId: string,
): Promise<DownloadableAttachment> {
  await ensureEmailExists(deps, teamId, emailId);
  const attachment = await deps.orm.em.findOne(
    EmailAttachment,
    { id: attachmentId, email: emailId },
    { fields: [...ATTACHMENT_METADATA] },
  );
  if (!attachment) throw notFound('Attachment');
  return describeSentAttachment(deps, emailId, attachment);
}
