import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { type IReceivedAttachment, ReceivedAttachment } from '../../entities/index.js';
import { signDownload } from '../downloads/download-token.js';
import { type DownloadableAttachment, dispositionOf, safeContentType } from '../downloads/downloadable.js';

export type ReceivingDeps = Pick<Deps, 'orm' | 'config' | 'secrets' | 'clock'>;

/** An attachment as the received email shows it (Resend's `InboundAttachment`): as declared, bytes not loaded. */
export interface ReceivedAttachmentInfo {
  id: string;
  filename: string | null;
  size: number;
  contentType: string;
  contentId: string | null;
  contentDisposition: string | null;
}

/** The attachments of these received emails, each email's in the order the message carries them; bytes stay unloaded (lazy). */
export async function attachmentsOf(
  em: EntityManager,
  emailIds: readonly string[],
): Promise<Map<string, IReceivedAttachment[]>> {
  const byEmail = new Map<string, IReceivedAttachment[]>(emailIds.map((id) => [id, []]));
  if (emailIds.length === 0) return byEmail;
  const rows = await em.find(
    ReceivedAttachment,
    { email: { $in: [...emailIds] } },
    { orderBy: { email: 'asc', position: 'asc' } },
  );
  for (const row of rows) byEmail.get(row.email.id)?.push(row);
  return byEmail;
}

export const describeReceivedAttachment = (attachment: IReceivedAttachment): ReceivedAttachmentInfo => ({
  id: attachment.id,
  filename: attachment.filename ?? null,
  size: attachment.size,
  contentType: safeContentType(attachment.contentType),
  contentId: attachment.contentId ?? null,
  contentDisposition: attachment.contentDisposition ?? null,
});

/** The same attachment for the attachment endpoints: a disposition the wire allows, and a download URL. */
export const downloadableReceivedAttachment = (
  deps: ReceivingDeps,
  attachment: IReceivedAttachment,
): DownloadableAttachment => ({
  ...describeReceivedAttachment(attachment),
  contentDisposition: dispositionOf(attachment.contentDisposition),
  download: signDownload(deps, {
    kind: 'received_attachment',
    emailId: attachment.email.id,
    attachmentId: attachment.id,
  }),
});
