import type { Deps } from '../../deps.js';
import { validationError } from '../../errors.js';
import { domainOfAddress } from './domain-name.js';

/** Who sends: the team, and the domain its key is limited to, if any. */
export interface Sender {
  teamId: string;
  domainId: string | null;
}

type AuthorizeDeps = Pick<Deps, 'config' | 'orm' | 'providers' | 'senderDomains' | 'clock'>;

/**
 * The `from` rule. An email's region is its `from` domain's region when the team has that domain,
 * else the default region. It may send when that domain is verified, or when the region is served
 * by `capture` (nothing leaves the machine, so a fresh install sends without DNS). A key limited to
 * a domain sends from that domain only. Refusals are 403 `validation_error`, as Resend's; in a batch
 * the message starts with the email's index in the request (`batchIndexes`: the checked emails' positions).
 */
export async function authorizeSenders(
  deps: AuthorizeDeps,
  sender: Sender,
  fromAddresses: string[],
  { batchIndexes }: { batchIndexes?: number[] } = {},
): Promise<{ region: string }[]> {
  const domains = await deps.senderDomains.forTeam(deps.orm, sender.teamId, deps.clock().getTime());
  const scope = sender.domainId ? (domains.find((d) => d.id === sender.domainId)?.name ?? null) : undefined;
  // Declared once, not per address: the send path runs this for every email it accepts.
  const refuse = (index: number, message: string) =>
    validationError(batchIndexes ? `${batchIndexes[index]}.from: ${message}` : message, 403);
  return fromAddresses.map((address, index) => {
    const name = domainOfAddress(address);
    if (scope !== undefined && scope !== name) {
      throw refuse(
        index,
        scope === null
          ? 'This API key was limited to a domain that has been removed; it cannot send.'
          : `This API key may only send from ${scope}, not ${name}.`,
      );
    }
    const domain = domains.find((d) => d.name === name);
    const region = domain?.region ?? deps.config.POSTLANE_DEFAULT_REGION;
    if (!deps.providers.serves(region))
      throw refuse(
        index,
        `The ${name} domain sends from region ${region}, which no configured provider serves any more.`,
      );
    if (domain?.status === 'verified' || deps.providers.forRegion(region).type === 'capture') return { region };
    throw refuse(
      index,
      `The ${name} domain is not verified. Please, add and verify your domain (POST /domains, then POST /domains/{id}/verify once its DNS records are published).`,
    );
  });
}
