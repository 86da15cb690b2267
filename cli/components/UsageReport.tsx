import { Box, Text } from 'ink';
import type { UsageDay } from '../../server/services/usage/usage-report.js';

export interface UsageReportProps {
  team: string;
  plan: string | null;
  acceptedToday: number;
  dailyLimit: number | null;
  period: { emailsSent: number; included: number; overage: boolean; startsAt: string; endsAt: string } | null;
  days: UsageDay[];
}

const BAR_WIDTH = 40;

/** The plan, today, the period, and one bar per day scaled to the busiest day. */
export function UsageReport({ team, plan, acceptedToday, dailyLimit, period, days }: UsageReportProps) {
  const busiest = Math.max(1, ...days.map((d) => d.accepted));
  const width = String(busiest).length;
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
        {'day'.padEnd(10)} {'accepted'.padEnd(BAR_WIDTH + width + 1)} delivered bounced complained
      </Text>
      {days.map((d) => (
        <Text key={d.day}>
          {d.day}{' '}
          <Text color="cyan">{'█'.repeat(Math.round((d.accepted / busiest) * BAR_WIDTH)).padEnd(BAR_WIDTH)}</Text>{' '}
          {String(d.accepted).padStart(width)}
          {'  '}
          {String(d.delivered).padStart(9)}{' '}
          <Text color={d.bounced ? 'yellow' : undefined}>{String(d.bounced).padStart(7)}</Text>
          {'  '}
          <Text color={d.complained ? 'red' : undefined}>{String(d.complained).padStart(10)}</Text>
        </Text>
      ))}
    </Box>
  );
}
