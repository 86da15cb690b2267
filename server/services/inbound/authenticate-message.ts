import { authenticate, type DNSResolver } from 'mailauth';
import type { Config } from '../../../config/index.js';
import type { DnsResolver as PostlaneResolver } from '../../dns/resolver.js';
import type { AuthVerdict, AuthVerdicts } from '../../entities/index.js';
import type { ReceivedEnvelope } from './envelope.js';

const trim = (verdict: AuthVerdict): AuthVerdict =>
  Object.fromEntries(Object.entries(verdict).filter(([, value]) => value !== undefined && value !== '')) as AuthVerdict;

/** The verdicts of a message whose checks did not run or finish, for the reason given. */
export function unauthenticated(comment: string): AuthVerdicts {
  return { spf: { result: 'temperror', comment }, dkim: [], dmarc: { result: 'temperror', comment } };
}

/**
 * SPF (of the client IP, HELO and MAIL FROM), DKIM (every signature) and DMARC (alignment with the
 * From domain) of a received message, with mailauth and our DNS servers. The verdicts are kept,
 * never acted on here: mail is stored whatever they say (the team decides). A check that cannot
 * finish reads `temperror` rather than costing the message.
 */
export async function authenticateMessage(
  deps: { dns: Pick<PostlaneResolver, 'resolve'>; config: Pick<Config, 'POSTLANE_INBOUND_MX_HOST'> },
  raw: Buffer,
  envelope: Omit<ReceivedEnvelope, 'recipients'>,
): Promise<AuthVerdicts> {
  try {
    const result = await authenticate(raw, {
      ip: envelope.peerIp,
      helo: envelope.helo,
      sender: envelope.mailFrom,
      mta: deps.config.POSTLANE_INBOUND_MX_HOST,
      resolver: ((name: string, type: string) => deps.dns.resolve(name, type)) as DNSResolver,
      disableArc: true,
      disableBimi: true,
    });
    const { spf, dmarc } = result;
    return {
      spf: spf
        ? trim({ result: spf.status.result, domain: spf.domain, detail: spf['client-ip'], comment: spf.status.comment })
        : { result: 'none' },
      // An unsigned message has one `none` entry without a signing domain: no signature, no verdict.
      dkim: result.dkim.results
        .filter((signature) => signature.signingDomain)
        .map((signature) =>
          trim({
            result: signature.status.result,
            domain: signature.signingDomain,
            detail: signature.selector,
            comment: signature.status.comment,
          }),
        ),
      dmarc: dmarc
        ? trim({
            result: dmarc.status.result,
            domain: dmarc.domain,
            detail: dmarc.policy,
            comment: dmarc.status.comment,
          })
        : { result: 'none' },
    };
  } catch (err) {
    return unauthenticated(err instanceof Error ? err.message : String(err));
  }
}
