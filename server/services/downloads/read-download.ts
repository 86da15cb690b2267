import { detectMimeType } from 'nodemailer/lib/mime-funcs/mime-types';
import type { Deps } from '../../deps.js';
import { EmailAttachment, ReceivedAttachment, ReceivedEmail } from '../../entities/index.js';
import { DownloadSigner } from './download-token.js';
import { dispositionOf, safeContentType } from './downloadable.js';

/** A file as the download endpoint serves it. */
export interface DownloadFile {
  filename: string | null;
  contentType: string;
  disposition: 'inline' | 'attachment';
  content: Buffer;
}

/** Koa sends a Buffer as bytes (and anything else as JSON); pg hands bytea over as one already. */
const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The file a download token names, if the token is one this instance signed, has not expired by
 * the injected clock, and its file still exists (a deleted or erased email takes its files along).
 */
export async function readDownload(
  deps: Pick<Deps, 'orm' | 'secrets' | 'clock'>,
  token: string,
): Promise<DownloadFile | null> {
  const target = DownloadSigner.from(deps.secrets).read(token, deps.clock());
  if (!target) return null;
  const em = deps.orm.em;
  switch (target.kind) {
    // A shared email's page is not a file: its token opens /shared/ only.
    case 'shared_email':
      return null;
    case 'sent_attachment': {
      const attachment = await em.findOne(EmailAttachment, { id: target.attachmentId, email: target.emailId });
      if (!attachment) return null;
      const contentType = safeContentType(attachment.contentType ?? detectMimeType(attachment.filename));
      return {
        filename: attachment.filename,
        contentType,
        disposition: 'attachment',
        content: asBuffer(attachment.content),
      };
    }
    case 'received_attachment': {
      const attachment = await em.findOne(
        ReceivedAttachment,
        { id: target.attachmentId, email: target.emailId },
        { populate: ['content'] },
      );
      if (!attachment) return null;
      const disposition = dispositionOf(attachment.contentDisposition);
      return {
        filename: attachment.filename ?? null,
        contentType: safeContentType(attachment.contentType),
        disposition,
        content: asBuffer(attachment.content.unwrap()!),
      };
    }
    case 'received_raw': {
      const email = await em.findOne(
        ReceivedEmail,
        { id: target.emailId },
        { populate: ['raw'], exclude: ['html', 'text', 'headers'] },
      );
      if (!email) return null;
      return {
        filename: `${email.id}.eml`,
        contentType: 'message/rfc822',
        disposition: 'attachment',
        content: asBuffer(email.raw.unwrap()!),
      };
    }
  }
}
