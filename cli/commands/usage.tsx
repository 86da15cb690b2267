import { type Command, Option } from 'commander';
import { loadConfig } from '../../config/index.js';
import { presentUsage } from '../../server/http/routes/usage/usage.presenter.js';
import { usageReport } from '../../server/services/usage/usage-report.js';
import { UsageReport } from '../components/UsageReport.js';
import { command, withDatabase } from '../lib/context.js';
import { printJson, renderElement } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

export function registerUsage(program: Command): void {
  program
    .command('usage')
    .description("a team's plan, today's and this period's mail, and a chart of the last days")
    .addOption(new Option('--team <id>', 'team id (default: the only team)'))
    .addOption(new Option('--days <n>', 'how many days to chart, today included').default(14).argParser((value) => {
      const days = Number(value);
      if (!Number.isInteger(days) || days < 1 || days > 366) throw new Error('--days must be a whole number from 1 to 366');
      return days;
    }))
    .action(
      command(async (options: { team?: string; days: number }, cmd: Command) => {
        const config = loadConfig();
        const { team, report } = await withDatabase(async ({ orm }) => {
          const team = await resolveTeam(orm, options.team);
          return { team, report: await usageReport({ orm, config, clock: () => new Date() }, team.id, options.days) };
        }, config);
        const usage = presentUsage(report, config.POSTLANE_CLOUD);
        if (cmd.optsWithGlobals().json) return printJson({ team_id: team.id, ...usage, days: report.days });
        await renderElement(
          <UsageReport
            team={`${team.name} (${team.id})`}
            plan={usage.plan}
            acceptedToday={usage.accepted_today}
            dailyLimit={usage.limits && 'emails_per_day' in usage.limits ? usage.limits.emails_per_day : null}
            period={usage.period && { emailsSent: usage.period.emails_sent, included: usage.period.included, overage: usage.period.overage_enabled, startsAt: usage.period.starts_at, endsAt: usage.period.ends_at }}
            days={report.days}
          />,
        );
      }),
    );
}
