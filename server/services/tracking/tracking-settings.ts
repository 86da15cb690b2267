import type { OutboundMessage } from '../../mail/outbound-message.js';
import type { Config } from '../../../config/index.js';
import type { Deps } from '../../deps.js';

import { addTracking, type TrackingSettings } from '../../tracking/add-tracking.js';
import { TrackingSigner } from '../../tracking/tracking-token.js';
import type { DomainTracking } from '../domains/dkim-key.js';
import { preferenceUrls } from '../preferences/preference-token.js';

/**
 * Where a domain's tracking URLs point, or nothing to add. Tracking waits for its CNAME to verify:
 * a link through a host that does not resolve is worse than an untracked one. The scheme and port
 * are POSTLANE_PUBLIC_URL's, which the CNAME leads to.
 */
export function trackingSettings(
  config: Pick<Config, 'POSTLANE_PUBLIC_URL'>,
  domain: DomainTracking | undefined,
): TrackingSettings | undefined {
  if (!domain?.cnameVerified || (!domain.openTracking && !domain.clickTracking)) return undefined;
  const publicUrl = new URL(config.POSTLANE_PUBLIC_URL);
  const ownPages = preferenceUrls(config, '');
  return {
    openTracking: domain.openTracking,
    clickTracking: domain.clickTracking,
    origin: `${publicUrl.protocol}//${domain.trackingSubdomain}.${domain.name}${publicUrl.port ? `:${publicUrl.port}` : ''}`,
    untracked: [ownPages.page, ownPages.oneClick],
  };
}

/** The outbound message with its from-domain's tracking added (see addTracking). */
export function withTracking(
  deps: Pick<Deps, 'config' | 'secrets'>,
  message: OutboundMessage,
  domain: DomainTracking | undefined,
): OutboundMessage {
  return addTracking(message, trackingSettings(deps.config, domain), TrackingSigner.from(deps.secrets));
}
