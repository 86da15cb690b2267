import type { Config } from '../../../config/index.js';

/** The shape of a received message measured without parsing it: bytes and lines of the header block, signatures, boundary lines. */
export interface MessageShape {
  headerBytes: number;
  headerLines: number;
  dkimSignatures: number;
  boundaryLines: number;
}

export type InboundLimits = Pick<
  Config,
  | 'POSTLANE_INBOUND_MAX_HEADER_KB'
  | 'POSTLANE_INBOUND_MAX_HEADER_LINES'
  | 'POSTLANE_INBOUND_MAX_DKIM_SIGNATURES'
  | 'POSTLANE_INBOUND_MAX_MIME_PARTS'
>;

/**
 * From this size a received message takes the lanes for large ones, in the mail workers and in the
 * writer: anyone may send megabytes, and mail of a few KB never waits behind them.
 */
export const LARGE_MESSAGE_BYTES = 128 * 1024;

const LF = 0x0a;
const DASH = 0x2d;

/**
 * One linear pass over the raw bytes, stopping at the end of the header block when it is already over
 * its limits (those messages are not parsed, so their body need not be counted). The header block
 * ends at the first empty line; without one the whole message is headers. Every MIME part starts with
 * a line beginning `--`, so the count of such lines bounds the parts from above.
 */
export function measureMessage(raw: Buffer, limits: InboundLimits): MessageShape {
  const maxHeaderBytes = limits.POSTLANE_INBOUND_MAX_HEADER_KB * 1024;
  let headerBytes = raw.length;
  let headerLines = 0;
  let dkimSignatures = 0;
  let boundaryLines = 0;
  let inHeader = true;
  let lineStart = 0;
  while (lineStart < raw.length) {
    let end = raw.indexOf(LF, lineStart);
    if (end === -1) end = raw.length;
    if (inHeader) {
      const length = end - lineStart - (end > lineStart && raw[end - 1] === 0x0d ? 1 : 0);
      if (length === 0) {
        inHeader = false;
        headerBytes = lineStart;
      } else {
        headerLines++;
        if (raw[lineStart] !== 0x20 && raw[lineStart] !== 0x09 && isDkimSignature(raw, lineStart)) dkimSignatures++;
        if (end + 1 > maxHeaderBytes || headerLines > limits.POSTLANE_INBOUND_MAX_HEADER_LINES)
          return { headerBytes: end + 1, headerLines, dkimSignatures, boundaryLines };
      }
    } else if (raw[lineStart] === DASH && raw[lineStart + 1] === DASH) boundaryLines++;
    lineStart = end + 1;
  }
  return { headerBytes, headerLines, dkimSignatures, boundaryLines };
}

const DKIM = Buffer.from('dkim-signature:');

function isDkimSignature(raw: Buffer, at: number): boolean {
  if (at + DKIM.length > raw.length) return false;
  for (let i = 0; i < DKIM.length; i++) if ((raw[at + i]! | 0x20) !== (DKIM[i]! | 0x20)) return false;
  return true;
}

/** Why the message is not authenticated and parsed (stored raw instead), or null when it is within every limit. */
export function headerLimitExceeded(shape: MessageShape, limits: InboundLimits): string | null {
  if (shape.headerBytes > limits.POSTLANE_INBOUND_MAX_HEADER_KB * 1024)
    return `header block over ${limits.POSTLANE_INBOUND_MAX_HEADER_KB} KB (POSTLANE_INBOUND_MAX_HEADER_KB): not parsed`;
  if (shape.headerLines > limits.POSTLANE_INBOUND_MAX_HEADER_LINES)
    return `header block over ${limits.POSTLANE_INBOUND_MAX_HEADER_LINES} lines (POSTLANE_INBOUND_MAX_HEADER_LINES): not parsed`;
  return null;
}

export function mimePartsExceeded(shape: MessageShape, limits: InboundLimits): string | null {
  return shape.boundaryLines > limits.POSTLANE_INBOUND_MAX_MIME_PARTS
    ? `more than ${limits.POSTLANE_INBOUND_MAX_MIME_PARTS} MIME boundary lines (POSTLANE_INBOUND_MAX_MIME_PARTS): not parsed`
    : null;
}

export function dkimSignaturesExceeded(shape: MessageShape, limits: InboundLimits): string | null {
  return shape.dkimSignatures > limits.POSTLANE_INBOUND_MAX_DKIM_SIGNATURES
    ? `${shape.dkimSignatures} DKIM signatures, more than ${limits.POSTLANE_INBOUND_MAX_DKIM_SIGNATURES} (POSTLANE_INBOUND_MAX_DKIM_SIGNATURES): not verified`
    : null;
}
