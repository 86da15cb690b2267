import { detectMimeType } from 'nodemailer/lib/mime-funcs/mime-types';
import type { Deps } from '../../deps.js';
import { EmailAttachment } from '../../entities/index.js';
import { DownloadSigner } from './download-token.js';
import { safeContentType } from './downloadable.js';

/** A file as the download endpoint serves it. */
export interface DownloadFile {
  filename: string | null;
  contentType: string;
  disposition: 'inline' | 'attachment';
  content: Buffer;
}

/**
 * The file a download token names, if the token is one this instance signed, has not expired by
 * the injected clock, and its file still exists (a deleted or erased email takes its files along).
 */
export async function readDownload(deps: Pick<Deps, 'orm' | 'secrets' | 'clock'>, token: string): Promise<DownloadFile | null> {
  const target = DownloadSigner.from(deps.secrets).read(token, deps.clock());
  if (!target) return null;
  const em = deps.orm.em;
  switch (target.kind) {
    case 'sent_attachment': {
      const attachment = await em.findOne(EmailAttachment, { id: target.attachmentId, email: target.emailId });
      if (!attachment) return null;
      const contentType = safeContentType(attachment.contentType ?? detectMimeType(attachment.filename));
      return { filename: attachment.filename, contentType, disposition: 'attachment', content: Buffer.from(attachment.content) };
    }
    default:
      return null;
  }
}
