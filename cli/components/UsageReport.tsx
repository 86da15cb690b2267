import { Box, Text } from 'ink';
import type { UsageDay } from '../../server/services/usage/usage-report.js';

export interface UsageReportProps {
  team: string;
  plan: string | null;
  acceptedToday: number;
  dailyLimit: number | null;
  period: { emailsSent: number; included: number; overage: boolean; startsAt: string; endsAt: string } | null;
  days: UsageDay[];
  /** The terminal's width (unset when piped). */
  width?: number;
}

const DAY = 10;
const GAP = 2;
/** The bar's width on a wide terminal or a pipe; narrower terminals get a shorter bar, never a wrapped row. */
const BAR_WIDTH = 40;
const MIN_BAR = 8;
const COUNTS = ['accepted', 'sent', 'delivered', 'bounced', 'complained'] as const;
const COLOURS: Partial<Record<(typeof COUNTS)[number], string>> = { bounced: 'yellow', complained: 'red' };

/** The plan, today, the period, and one bar per day scaled to the busiest day. */
export function UsageReport({ team, plan, acceptedToday, dailyLimit, period, days, width }: UsageReportProps) {
  const busiest = Math.max(1, ...days.map((d) => d.accepted));
  const widths = COUNTS.map((count) => Math.max(count.length, ...days.map((d) => String(d[count]).length)));
  const fixed = DAY + 1 + widths.reduce((sum, w) => sum + w + GAP, 0);
  const bar = width === undefined ? BAR_WIDTH : Math.max(MIN_BAR, Math.min(BAR_WIDTH, width - fixed - 1));
  const gap = ' '.repeat(GAP);
  return (
    <Box flexDirection="column">
      <Text bold>{team}</Text>
      <Text>
        Plan: {plan ?? 'none (self-hosted: nothing is capped)'}
        {'   '}Accepted today: <Text bold>{acceptedToday}</Text>
        {dailyLimit !== null
          ? ` of ${dailyLimit} (up to ${Math.floor(dailyLimit * 1.5)} go out today, then mail waits for midnight UTC)`
          : ''}
      </Text>
      {period ? (
        <Text>
          This period ({period.startsAt.slice(0, 10)} to {period.endsAt.slice(0, 10)}):{' '}
          <Text bold>{period.emailsSent}</Text> of {period.included} included
          {period.emailsSent > period.included
            ? period.overage
              ? `, ${period.emailsSent - period.included} billed as overage`
              : ', further sends refused'
            : ''}
        </Text>
      ) : null}
      <Text> </Text>
      <Text color="gray">
        {'day'.padEnd(DAY)} {''.padEnd(bar)}
        {COUNTS.map((count, i) => gap + count.padStart(widths[i]!)).join('')}
      </Text>
      {days.map((d) => (
        <Text key={d.day}>
          {d.day.padEnd(DAY)}{' '}
          <Text color="cyan">{'█'.repeat(Math.round((d.accepted / busiest) * bar)).padEnd(bar)}</Text>
          {COUNTS.map((count, i) => (
            <Text key={count} color={d[count] ? COLOURS[count] : undefined}>
              {gap + String(d[count]).padStart(widths[i]!)}
            </Text>
          ))}
        </Text>
      ))}
    </Box>
  );
}
