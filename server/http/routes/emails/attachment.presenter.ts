import type { SignedDownload } from '../../../services/downloads/download-token.js';
import type { DownloadableAttachment } from '../../../services/downloads/downloadable.js';

export const presentDownload = (download: SignedDownload) => ({
  download_url: download.url,
  expires_at: download.expiresAt.toISOString(),
});

export function presentAttachmentListItem(attachment: DownloadableAttachment) {
  return {
    id: attachment.id,
    ...(attachment.filename === null ? {} : { filename: attachment.filename }),
    size: attachment.size,
    content_type: attachment.contentType,
    content_disposition: attachment.contentDisposition,
    ...(attachment.contentId === null ? {} : { content_id: attachment.contentId }),
    ...presentDownload(attachment.download),
  };
}

export const presentAttachment = (attachment: DownloadableAttachment) => ({
  object: 'attachment' as const,
  ...presentAttachmentListItem(attachment),
});
