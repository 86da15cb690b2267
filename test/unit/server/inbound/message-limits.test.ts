import { describe, expect, it } from 'vitest';
import {
  dkimSignaturesExceeded,
  headerLimitExceeded,
  measureMessage,
  mimePartsExceeded,
} from '../../../../server/services/inbound/message-limits.js';

const limits = {
  POSTLANE_INBOUND_MAX_HEADER_KB: 1,
  POSTLANE_INBOUND_MAX_HEADER_LINES: 10,
  POSTLANE_INBOUND_MAX_DKIM_SIGNATURES: 2,
  POSTLANE_INBOUND_MAX_MIME_PARTS: 3,
};

describe('measureMessage', () => {
  it('measures the header block up to the first empty line, folded lines included', () => {
    const raw = Buffer.from(
      'Subject: a\r\n b\r\nDKIM-Signature: x\r\ndkim-signature: y\r\n\r\n--b\r\nbody\r\n--b--\r\n',
    );
    const shape = measureMessage(raw, limits);
    expect(shape).toEqual({
      headerBytes: 'Subject: a\r\n b\r\nDKIM-Signature: x\r\ndkim-signature: y\r\n'.length,
      headerLines: 4,
      dkimSignatures: 2,
      boundaryLines: 2,
    });
    expect(headerLimitExceeded(shape, limits)).toBeNull();
    expect(dkimSignaturesExceeded(shape, limits)).toBeNull();
    expect(mimePartsExceeded(shape, limits)).toBeNull();
  });

  it('accepts bare LF line ends and a message without a body', () => {
    expect(measureMessage(Buffer.from('A: 1\nB: 2\n\nx\n'), limits)).toMatchObject({ headerBytes: 10, headerLines: 2 });
    expect(measureMessage(Buffer.from('A: 1\r\nB: 2'), limits)).toMatchObject({ headerBytes: 10, headerLines: 2 });
  });

  it('names the limit a message passes', () => {
    const folded = measureMessage(Buffer.from(`X: a${'\r\n b'.repeat(20)}\r\n\r\nx`), limits);
    expect(headerLimitExceeded(folded, limits)).toMatch(/POSTLANE_INBOUND_MAX_HEADER_LINES/);
    const long = measureMessage(Buffer.from(`X: ${'a'.repeat(2000)}\r\n\r\nx`), limits);
    expect(headerLimitExceeded(long, limits)).toMatch(/POSTLANE_INBOUND_MAX_HEADER_KB/);
    const signed = measureMessage(
      Buffer.from('DKIM-Signature: 1\r\nDKIM-Signature: 2\r\nDkim-Signature: 3\r\n\r\n'),
      limits,
    );
    expect(dkimSignaturesExceeded(signed, limits)).toMatch(/3 DKIM signatures/);
    const parts = measureMessage(Buffer.from(`A: 1\r\n\r\n${'--b\r\nx\r\n'.repeat(4)}`), limits);
    expect(mimePartsExceeded(parts, limits)).toMatch(/POSTLANE_INBOUND_MAX_MIME_PARTS/);
  });
});
