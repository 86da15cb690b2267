import type { Command } from 'commander';
import { loadConfig } from '../../config/index.js';
import { presentUsage } from '../../server/http/routes/usage/usage.presenter.js';
import { usageReport } from '../../server/services/usage/usage-report.js';
import { UsageReport } from '../components/UsageReport.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, terminalWidth } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

export async function usage(options: { team?: string; days: number }, cmd: Command): Promise<void> {
  const config = loadConfig();
  const { team, report } = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    return { team, report: await usageReport({ orm, config, clock: () => new Date() }, team.id, options.days) };
  }, config);
  const presented = presentUsage(report, config.POSTLANE_CLOUD);
  if (cmd.optsWithGlobals().json) return printJson({ team_id: team.id, ...presented, days: report.days });
  await renderElement(
    <UsageReport
      team={`${team.name} (${team.id})`}
      plan={presented.plan}
      acceptedToday={presented.accepted_today}
      dailyLimit={presented.limits && 'emails_per_day' in presented.limits ? presented.limits.emails_per_day : null}
      period={
        presented.period && {
          emailsSent: presented.period.emails_sent,
          included: presented.period.included,
          overage: presented.period.overage_enabled,
          startsAt: presented.period.starts_at,
          endsAt: presented.period.ends_at,
        }
      }
      days={report.days}
      width={terminalWidth()}
    />,
  );
}
