import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/domains.js'), { database: true });

export function registerDomains(program: Command): void {
  const domains = program
    .command('domains')
    .description('sending domains: the DNS records to publish, and their verification');

  domains
    .command('add')
    .description('add a sending domain and print the DNS records to publish (values whole, for copying)')
    .argument('<name>', 'domain name, e.g. example.com')
    .option('--region <region>', 'region whose provider sends its mail (default: POSTLANE_DEFAULT_REGION)')
    .addOption(teamOption())
    .action(action('add'));

  domains
    .command('list')
    .description('list sending domains with their status')
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(action('list'));

  domains
    .command('show')
    .description('a domain with its records and what the last check found')
    .argument('<domain>', 'domain name or id')
    .addOption(teamOption())
    .action(action('show'));

  domains
    .command('verify')
    .description(
      'check the DNS records now and record the result (the recurring check does it too); exits 1 while the domain is not verified',
    )
    .argument('<domain>', 'domain name or id')
    .addOption(teamOption())
    .action(action('verify'));

  domains
    .command('remove')
    .description('remove a domain and its DKIM key')
    .argument('<domain>', 'domain name or id')
    .addOption(teamOption())
    .action(action('remove'));

  domains
    .command('check')
    .description(
      'every record: expected value, what DNS answers now, a verdict; then hints (SPF past 10 lookups, two SPF records, no DMARC). Changes nothing; exits 1 while a required record is missing or wrong, so it suits monitoring',
    )
    .argument('<domain>', 'domain name or id')
    .addOption(teamOption())
    .action(action('check'));
}
