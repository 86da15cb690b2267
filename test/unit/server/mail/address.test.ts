import { describe, expect, it } from 'vitest';
import { parseMailbox } from '../../../../server/mail/address.js';

describe('parseMailbox', () => {
  it.each([
    ['user@example.com', 'user@example.com'],
    ['Acme <hello@acme.test>', 'Acme <hello@acme.test>'],
    ['"Doe, Jane" <jane@example.com>', '"Doe, Jane" <jane@example.com>'],
    ['  Zoë <zoe@exämple.com>', 'Zoë <zoe@exämple.com>'],
  ])('accepts %s as %s', (input, formatted) => {
    expect(parseMailbox(input)).toMatchObject({ formatted });
  });

  it.each([
    ['"Evil" <a@b.com>\r\nBcc: victim@x.com', /control characters/],
    ['not an email', /single email address/],
    ['a@b.com, c@d.com', /single email address/],
    ['Doe, Jane <jane@example.com>', /single email address/],
    ['"a@b.com" <c@d.com>', /must not contain @/],
    ['x@[127.0.0.1]', /fully qualified/],
    ['a@localhost', /fully qualified/],
    ['foo..bar@example.com', /single email address/],
    ['"other@elsewhere.org x"@example.com', /quoted local part/],
    ['"a b"@example.com', /quoted local part/],
    ['broken \ud800 <a@example.com>', /broken characters/],
    [`${'('.repeat(900)}a@example.com`, /too long/],
    [`${'x'.repeat(1000)}@example.com`, /too long/],
  ])('refuses %j', (input, reason) => {
    expect(parseMailbox(input)).toMatch(reason);
  });
});
