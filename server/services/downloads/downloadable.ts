import type { SignedDownload } from './download-token.js';

/** An attachment as the attachment endpoints show it, sent or received: its metadata and a fresh download URL. */
export interface DownloadableAttachment {
  id: string;
  filename: string | null;
  contentType: string;
  contentDisposition: 'inline' | 'attachment';
  contentId: string | null;
  size: number;
  download: SignedDownload;
}

const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

/**
 * A MIME type fit for a response header: received mail can declare anything, and a value with a
 * line break or parameters of its own must not reach `Content-Type` (nor fail the response).
 */
export const safeContentType = (value: string | null | undefined): string =>
  value && MIME_TYPE.test(value) ? value.toLowerCase() : 'application/octet-stream';

/** Mail says `inline` or `attachment` (or nothing, or nonsense); anything but `inline` is served as a download. */
export const dispositionOf = (value: string | null | undefined): 'inline' | 'attachment' =>
  value?.toLowerCase() === 'inline' ? 'inline' : 'attachment';
