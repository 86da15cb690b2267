import type { ReceivedEmailView } from '../../../services/inbound/get-received-email.js';
import type { ReceivedEmailListItem } from '../../../services/inbound/list-received-emails.js';
import type { ReceivedAttachmentInfo } from '../../../services/inbound/received-attachments.js';
import { presentDownload } from '../emails/attachment.presenter.js';

const presentReceivedAttachment = (attachment: ReceivedAttachmentInfo) => ({
  id: attachment.id,
  filename: attachment.filename,
  size: attachment.size,
  content_type: attachment.contentType,
  content_id: attachment.contentId,
  content_disposition: attachment.contentDisposition,
});

export function presentReceivedEmailListItem({ email, attachments }: ReceivedEmailListItem) {
  return {
    id: email.id,
    to: email.to,
    from: email.from,
    created_at: email.createdAt.toISOString(),
    subject: email.subject,
    bcc: email.bcc,
    cc: email.cc,
    reply_to: email.replyTo,
    received_for: email.receivedFor,
    message_id: email.messageId,
    attachments: attachments.map(presentReceivedAttachment),
  };
}

export function presentReceivedEmail({ email, html, attachments, raw }: ReceivedEmailView) {
  return {
    object: 'email' as const,
    ...presentReceivedEmailListItem({ email, attachments }),
    html,
    text: email.text ?? null,
    headers: email.headers,
    raw: presentDownload(raw),
    authentication: { spf: email.spf, dkim: email.dkim, dmarc: email.dmarc },
    parse_error: email.parseError ?? null,
  };
}
