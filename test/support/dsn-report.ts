/** One recipient's verdict in a report. */
export interface DsnBlock {
  address: string;
  action: string;
  status: string;
  diagnostic?: string;
}

/**
 * A delivery status notification (RFC 3464) as Postfix writes it: CRLF, folded fields, the
 * returned headers as text/rfc822-headers (left out with `messageId: null`, as some MTAs do).
 */
export const dsnReport = (
  messageId: string | null,
  blocks: DsnBlock[],
  id = `<${Math.random().toString(36).slice(2)}@mx.example.net>`,
  to = 'a@acme.test',
) =>
  [
    'From: MAILER-DAEMON@mx.example.net (Mail Delivery System)',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Message-ID: ${id}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status;',
    '\tboundary="B0UND/mx"',
    '',
    'This is a MIME-encapsulated message.',
    '',
    '--B0UND/mx',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'I am sorry to have to inform you that your message could not be delivered.',
    '',
    '--B0UND/mx',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.net',
    'Arrival-Date: Tue, 24 Nov 2026 06:00:00 +0000',
    ...blocks.flatMap((b) => [
      '',
      `Final-Recipient: rfc822; ${b.address}`,
      `Action: ${b.action}`,
      `Status: ${b.status}`,
      ...(b.diagnostic
        ? [
            `Diagnostic-Code: smtp; ${b.diagnostic.split(': ')[0]}:`,
            `    ${b.diagnostic.split(': ').slice(1).join(': ')}`,
          ]
        : []),
    ]),
    '',
    ...(messageId === null
      ? []
      : [
          '--B0UND/mx',
          'Content-Type: text/rfc822-headers',
          '',
          'From: a@acme.test',
          'Subject: dsn',
          `Message-ID: ${messageId}`,
          '',
        ]),
    '--B0UND/mx--',
    '',
  ].join('\r\n');
