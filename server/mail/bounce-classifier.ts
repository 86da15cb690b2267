import * as v from 'valibot';
import shippedRules from '../../config/bounce-rules.json' with { type: 'json' };
import { parseOperatorFile, readOperatorFile } from '../operator-file.js';

const RULE_FILE = 'Bounce rule file';

/**
 * The published bounce classes, each with the line the documentation prints for it. The order is
 * the documentation's.
 */
export const BOUNCE_CLASSES = {
  invalid_recipient: 'The recipient address does not exist, or no longer does, at its domain.',
  mailbox_full: "The recipient's mailbox, or the receiving system's storage, is full.",
  message_too_large: 'The message is over a size limit of the receiving system (message, header or attachments).',
  content_block:
    'The content was refused: spam or a virus detected, a forbidden attachment, or a message not well formed.',
  policy_block:
    'The sender was refused for policy or reputation: a blocklist listing, a poor IP or domain reputation, missing reverse DNS, a relay or sender refusal.',
  authentication_failure: 'The message failed the sender authentication the receiver requires (SPF, DKIM or DMARC).',
  rate_limited: 'The receiving system asked the sender to slow down: too many connections, messages or recipients.',
  dns_failure:
    "The recipient's domain did not resolve to a mail server: no such domain, no MX or a null MX, or a name server failure.",
  tls_failure:
    'Delivery needed TLS and did not get it: STARTTLS required or refused, or a certificate or version refused.',
  unknown: 'No rule recognised the reply: timeouts, loops, remote system errors and the rest.',
} as const satisfies Record<string, string>;

export type BounceClass = keyof typeof BOUNCE_CLASSES;
const CLASS_NAMES = Object.keys(BOUNCE_CLASSES) as [BounceClass, ...BounceClass[]];

/** A reply as a remote server gave it, or as a DSN reports it: the text alone is enough. */
export interface SmtpReply {
  code?: number;
  enhanced?: string;
  text: string;
}

export interface ReplyClassification {
  class: BounceClass;
  /** Whether sending again cannot help: a 5xx code or 5.x.x status, or, with neither, the class's nature. */
  permanent: boolean;
  /**
   * Whether the reply is about the sending IP and backs the MX group off (direct delivery): a
   * rate limit, a policy or reputation block, a 421; a rule's `backoff` says otherwise.
   */
  backoff: boolean;
}

export type ClassifyReply = (reply: SmtpReply) => ReplyClassification;

/**
 * Only the start of a reply is matched: every reply we know says what it means in its first few
 * hundred characters, and a hostile server's megabyte of text then costs no more than 2 KB.
 */
export const MATCHED_TEXT_CHARS = 2048;

/** Classes whose replies are about the sending IP: they back the MX group off (a 421 does too). */
const BACKS_OFF: ReadonlySet<BounceClass> = new Set(['rate_limited', 'policy_block']);

/** Classes that mean "try again later" when the reply carries no code to say so. */
const TRANSIENT_WITHOUT_CODE: ReadonlySet<BounceClass> = new Set([
  'mailbox_full',
  'rate_limited',
  'dns_failure',
  'tls_failure',
  'unknown',
]);

/**
 * A pattern is refused when a repeated group holds a repetition or an alternation, as in `(a+)+` or
 * `(a|ab)*`: those are what make a regular expression backtrack exponentially on text chosen to
 * defeat it. The check is deliberately coarse (a lone `?` after a group is allowed).
 */
function backtracksCatastrophically(pattern: string): boolean {
  const open: { risky: boolean }[] = [];
  let inClass = false;
  let closedRisky = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const repeatsLast = c === '*' || c === '+' || c === '{';
    if (closedRisky && repeatsLast) return true;
    closedRisky = false;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      inClass = c !== ']';
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') open.push({ risky: false });
    else if (c === ')') closedRisky = open.pop()?.risky ?? false;
    else if ((repeatsLast || c === '|') && open.length > 0) open.forEach((group) => (group.risky = true));
  }
  return false;
}

/** `550`, `55x`, `4xx`: digits, or `x` for any digit. */
const CodePatternSchema = v.pipe(
  v.string(),
  v.regex(/^[245x][0-9x]{2}$/, 'must be a reply code such as 550, 4xx or 45x'),
);
/** `5.1.1`, `x.7.26`, `4.x.x`: numbers, or `x` for any. */
const EnhancedPatternSchema = v.pipe(
  v.string(),
  v.regex(/^([245x])\.(\d{1,3}|x)\.(\d{1,3}|x)$/, 'must be an enhanced status code such as 5.1.1, x.7.26 or 4.x.x'),
);
const TextPatternSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.check((pattern) => {
    try {
      new RegExp(pattern, 'i');
      return true;
    } catch {
      return false;
    }
  }, 'must be a valid regular expression'),
  v.check(
    (pattern) => !backtracksCatastrophically(pattern),
    'must not repeat a group that itself repeats or alternates, such as (a+)+ or (a|b)*',
  ),
);

export const BounceRuleSchema = v.pipe(
  v.strictObject({
    class: v.picklist(CLASS_NAMES, `must be one of ${CLASS_NAMES.join(', ')}`),
    code: v.optional(CodePatternSchema),
    enhanced: v.optional(EnhancedPatternSchema),
    /** Matched case-insensitively against the reply's text. */
    text: v.optional(TextPatternSchema),
    /**
     * Whether a reply it matches backs the MX group off. Unset: as its class and code have it
     * (rate limits, policy blocks and 421 replies do).
     */
    backoff: v.optional(v.boolean()),
    /** Why the rule is there: for the reader of the file only. */
    note: v.optional(v.string()),
  }),
  v.check(
    (rule) => rule.code !== undefined || rule.enhanced !== undefined || rule.text !== undefined,
    'a rule needs code, enhanced or text',
  ),
);
export const BounceRulesFileSchema = v.strictObject({
  description: v.optional(v.string()),
  rules: v.array(BounceRuleSchema),
});
export type BounceRuleInput = v.InferInput<typeof BounceRuleSchema>;

interface CompiledRule {
  class: BounceClass;
  backoff: boolean | undefined;
  code: RegExp | null;
  enhanced: RegExp | null;
  text: RegExp | null;
}

/** `x` stands for one digit of a reply code, or one number of an enhanced code. */
const wildcard = (pattern: string, any: string) => new RegExp(`^${pattern.replace(/\./g, '\\.').replace(/x/g, any)}$`);

function compile(rule: v.InferOutput<typeof BounceRuleSchema>): CompiledRule {
  return {
    class: rule.class,
    backoff: rule.backoff,
    code: rule.code === undefined ? null : wildcard(rule.code, '\\d'),
    enhanced: rule.enhanced === undefined ? null : wildcard(rule.enhanced, '\\d{1,3}'),
    text: rule.text === undefined ? null : new RegExp(rule.text, 'i'),
  };
}

/** Parses a rule file's content, or throws naming the file and the first problem with its path. */
export function parseBounceRules(content: unknown, origin: string): CompiledRule[] {
  return parseOperatorFile(RULE_FILE, BounceRulesFileSchema, content, origin).rules.map(compile);
}

// A status code stands alone: not a piece of an IP address or a version number.
const ENHANCED_IN_TEXT = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?!\d|\.\d)/;
const CODE_IN_TEXT = /(?<![\w.-])([245]\d\d)(?=[\s-]|$)/;

/**
 * The classifier for the shipped rules, preceded by those of `operatorFile` when given: the first
 * rule whose every condition holds decides. Rules are validated and compiled here, once; an invalid
 * file throws.
 */
export function createBounceClassifier(operatorFile?: string): ClassifyReply {
  const rules = [
    ...(operatorFile ? parseBounceRules(readOperatorFile(RULE_FILE, operatorFile), operatorFile) : []),
    ...parseBounceRules(shippedRules, 'config/bounce-rules.json'),
  ];
  return function classifyReply(reply: SmtpReply): ReplyClassification {
    const text = reply.text.slice(0, MATCHED_TEXT_CHARS).replace(/\s+/g, ' ');
    const enhanced = reply.enhanced?.trim() || text.match(ENHANCED_IN_TEXT)?.slice(1, 4).join('.');
    const code = reply.code?.toString() ?? text.match(CODE_IN_TEXT)?.[1];
    const rule = rules.find(
      (r) =>
        (!r.code || (code !== undefined && r.code.test(code))) &&
        (!r.enhanced || (enhanced !== undefined && r.enhanced.test(enhanced))) &&
        (!r.text || r.text.test(text)),
    );
    const found = rule?.class ?? 'unknown';
    const severity = enhanced?.[0] ?? code?.[0];
    return {
      class: found,
      permanent: severity ? severity === '5' : !TRANSIENT_WITHOUT_CODE.has(found),
      backoff: rule?.backoff ?? (BACKS_OFF.has(found) || code === '421'),
    };
  };
}
