import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';

/** Why a pixel fetch or a followed link counts as a machine's: `data.open.reason` / `data.click.reason` of `email.prefetched`. */
export type MachineReason =
  'privacy_proxy' | 'prefetch' | 'security_scanner' | 'not_a_browser' | 'on_delivery' | 'burst';

/** What a tracking request says about who made it. */
export interface Fetcher {
  ipAddress: string | null;
  userAgent: string | null;
  /** A speculative-load marker the request carried (`Sec-Purpose`, `Purpose`, `X-Purpose`, `X-Moz`), or `head` for a HEAD request. */
  purpose?: string | null;
}

interface Rule {
  reason: MachineReason;
  userAgent?: RegExp;
  /** CIDR ranges the requests come from. */
  ipRanges?: string[];
  purpose?: RegExp;
  test?: (userAgent: string) => boolean;
}

/** Chrome dropped Windows XP and Vista at version 50, Firefox after 52 ESR: newer ones there are made up. */
const impossibleOnOldWindows = (ua: string) => {
  if (!/Windows NT (5\.\d|6\.0)\b/.test(ua)) return false;
  const chrome = /Chrome\/(\d+)/.exec(ua);
  const firefox = /Firefox\/(\d+)/.exec(ua);
  return (chrome !== null && Number(chrome[1]) >= 50) || (firefox !== null && Number(firefox[1]) >= 53);
};

/**
 * The machine rules, first match wins. Rules by user agent catch those who say who they are; the
 * address ranges (from the vendors' published mail ranges) catch scanners that pose as browsers.
 * `isbot` closes the list for crawlers, link unfurlers and HTTP libraries it knows.
 */
const RULES: readonly Rule[] = [
  // A request that says it is speculative (browser prefetch or prerender, link previews) or only asks for headers.
  { reason: 'prefetch', purpose: /prefetch|prerender|preview|head/i },
  // Apple Mail Privacy Protection loads remote content at delivery through Apple's relays, with this bare identity.
  { reason: 'privacy_proxy', userAgent: /^Mozilla\/5\.0$/ },
  // Gmail fetches images once through its image proxy and serves them from its cache.
  { reason: 'privacy_proxy', userAgent: /GoogleImageProxy|via ggpht\.com/i },
  // Yahoo and AOL Mail fetch images through their proxy.
  { reason: 'privacy_proxy', userAgent: /YahooMailProxy/i },
  // Microsoft Safe Links and Exchange Online Protection follow links from Microsoft's mail-protection ranges; Office apps probe links first.
  {
    reason: 'security_scanner',
    userAgent: /Microsoft Office Existence Discovery/i,
    ipRanges: ['40.92.0.0/15', '40.107.0.0/16', '52.100.0.0/15', '52.102.0.0/16', '104.47.0.0/17'],
  },
  // Proofpoint URL Defense and its sandbox (pphosted ranges).
  { reason: 'security_scanner', userAgent: /proofpoint/i, ipRanges: ['148.163.128.0/19', '67.231.144.0/20'] },
  // Mimecast URL Protect (US gateways).
  {
    reason: 'security_scanner',
    userAgent: /mimecast/i,
    ipRanges: ['205.139.110.0/24', '207.211.30.0/24', '216.205.24.0/24'],
  },
  // Barracuda Email Security (Link Protection).
  { reason: 'security_scanner', userAgent: /barracuda/i, ipRanges: ['64.235.144.0/20', '209.222.80.0/21'] },
  // Other gateways that name themselves.
  {
    reason: 'security_scanner',
    userAgent:
      /Symantec|Forcepoint|Trend ?Micro|FireEye|Trellix|Cisco|IronPort|Sophos|Fortinet|Zscaler|Bitdefender|Kaspersky/i,
  },
  // No browser sends no identity at all.
  { reason: 'not_a_browser', test: (ua) => ua.trim() === '' },
  // Headless and automation browsers.
  { reason: 'not_a_browser', userAgent: /Headless|PhantomJS|SlimerJS|Puppeteer|Playwright|Selenium|webdriver/i },
  // Versions that never ran on the system they claim.
  { reason: 'not_a_browser', test: impossibleOnOldWindows },
  // Crawlers, link unfurlers (Slack, WhatsApp…), HTTP libraries (curl, python-requests…): what isbot knows.
  { reason: 'not_a_browser', test: isbot },
];

const parsedRanges = new Map<string, [ipaddr.IPv4 | ipaddr.IPv6, number]>();
const inRange = (ip: ipaddr.IPv4 | ipaddr.IPv6, cidr: string) => {
  let range = parsedRanges.get(cidr);
  if (!range) parsedRanges.set(cidr, (range = ipaddr.parseCIDR(cidr)));
  return ip.kind() === range[0].kind() && ip.match(range);
};

/** The machine that made this request, by the rules above; null for what looks like a person. */
export function machineReason(fetcher: Fetcher): MachineReason | null {
  const ua = fetcher.userAgent ?? '';
  // IPv4 clients of a dual-stack socket arrive as ::ffff:a.b.c.d.
  const ip = fetcher.ipAddress && ipaddr.isValid(fetcher.ipAddress) ? ipaddr.process(fetcher.ipAddress) : null;
  for (const rule of RULES) {
    if (rule.purpose && fetcher.purpose && rule.purpose.test(fetcher.purpose)) return rule.reason;
    if (rule.userAgent?.test(ua)) return rule.reason;
    if (rule.ipRanges && ip && rule.ipRanges.some((cidr) => inRange(ip, cidr))) return rule.reason;
    if (rule.test?.(ua)) return rule.reason;
  }
  return null;
}
