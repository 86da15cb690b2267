import type { Command } from 'commander';
import { Box, Text } from 'ink';
import { presentDomain, presentDomainListItem } from '../../server/http/routes/domains/domain.presenter.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { deleteDomain } from '../../server/services/domains/delete-domain.js';
import { diagnoseDomain } from '../../server/services/domains/diagnose-domain.js';
import { getDomain } from '../../server/services/domains/get-domain.js';
import { listDomains } from '../../server/services/domains/list-domains.js';
import { verifyDomain } from '../../server/services/domains/verify-domain.js';
import { DnsRecordsTable } from '../components/DnsRecordsTable.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable, renderTasks, task, terminalWidth } from '../lib/render.js';
import { withDomainDeps } from '../services/domain-deps.js';
import { domainObject, resolveTeam } from '../services/resolve-team.js';

type Presented = ReturnType<typeof presentDomain>;

/** Each record whole, one block per record, so values can be copied into a DNS provider's form. */
function DomainRecords({ domain }: { domain: Presented }) {
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{domain.name}</Text> {domain.id} · region {domain.region} ·{' '}
        <Text color={domain.status === 'verified' ? 'green' : 'yellow'}>{domain.status}</Text>
      </Text>
      {domain.records.map((r, index) => (
        <Box key={index} flexDirection="column" marginTop={1}>
          <Text bold>
            {r.record} ({r.type}
            {r.priority !== undefined ? `, priority ${r.priority}` : ''}) · {r.status}
            {r.policy ? ` · policy ${r.policy}` : ''}
          </Text>
          <Text> name: {r.name}</Text>
          <Text> value: {r.value}</Text>
          {r.detail ? <Text color="gray"> {r.detail}</Text> : null}
        </Box>
      ))}
    </Box>
  );
}

export async function add(name: string, options: { region?: string; team?: string }, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const domain = await withDatabase(({ config, orm }) =>
    withDomainDeps(config, orm, async (deps) => {
      const team = await resolveTeam(orm, options.team);
      const [created] = await renderTasks(
        [
          {
            title: `Adding ${name} (making its DKIM key)`,
            run: () => createDomain(deps, team.id, { name, region: options.region }),
          },
        ],
        { quiet: json },
      );
      return presentDomain(created);
    }),
  );
  if (json) return printJson(domain);
  await renderElement(<DomainRecords domain={domain} />);
  await renderElement(
    <Text color="gray">
      Publish these records, then run `postlane domains verify {domain.name}` (Postlane also checks on its own).
    </Text>,
  );
}

export async function list(options: { team?: string; limit: number }, cmd: Command): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    return (await listDomains({ orm }, team.id, { limit: options.limit })).data.map(presentDomainListItem);
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['ID', 'NAME', 'STATUS', 'REGION', 'TRACKING', 'CREATED'],
    rows: rows.map((d) => [
      d.id,
      d.name,
      d.status,
      d.region,
      [d.open_tracking && 'opens', d.click_tracking && 'clicks'].filter(Boolean).join(', ') || 'off',
      d.created_at,
    ]),
    empty: 'No domains yet. Add one with `postlane domains add <name>`.',
  });
}

export async function show(idOrName: string, options: { team?: string }, cmd: Command): Promise<void> {
  const domain = await withDatabase(async ({ orm }) =>
    presentDomain(
      await getDomain({ orm }, (await resolveTeam(orm, options.team, domainObject(idOrName))).id, idOrName),
    ),
  );
  if (cmd.optsWithGlobals().json) return printJson(domain);
  await renderElement(<DomainRecords domain={domain} />);
}

export async function verify(idOrName: string, options: { team?: string }, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const domain = await withDatabase(({ config, orm }) =>
    withDomainDeps(config, orm, async (deps) => {
      const team = await resolveTeam(orm, options.team, domainObject(idOrName));
      const [verified] = await renderTasks(
        [
          task({
            title: `Checking the DNS records of ${idOrName}`,
            run: () => verifyDomain(deps, team.id, idOrName),
            detail: (d) => d.status,
          }),
        ],
        { quiet: json },
      );
      return presentDomain(verified);
    }),
  );
  // Like `domains check`: a script can wait on the exit code for the domain to become usable.
  if (domain.status !== 'verified') process.exitCode = 1;
  if (json) return printJson(domain);
  await renderElement(<DomainRecords domain={domain} />);
}

export async function remove(idOrName: string, options: { team?: string }, cmd: Command): Promise<void> {
  const removed = await withDatabase(({ config, orm }) =>
    withDomainDeps(config, orm, async (deps) =>
      deleteDomain(deps, (await resolveTeam(orm, options.team, domainObject(idOrName))).id, idOrName),
    ),
  );
  if (cmd.optsWithGlobals().json) return printJson({ id: removed.id, name: removed.name, deleted: true });
  await renderElement(
    <Text>
      Removed {removed.name} ({removed.id}).
    </Text>,
  );
}

export async function check(idOrName: string, options: { team?: string }, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const diagnosis = await withDatabase(({ config, orm }) =>
    withDomainDeps(config, orm, async (deps) => {
      const team = await resolveTeam(orm, options.team, domainObject(idOrName));
      const [result] = await renderTasks(
        [{ title: `Asking DNS about ${idOrName}`, run: () => diagnoseDomain(deps, team.id, idOrName) }],
        { quiet: json },
      );
      return result;
    }),
  );
  const required = diagnosis.records.filter((r) => r.required);
  const allFound = required.every((r) => r.status === 'verified');
  const unanswered = required.filter((r) => r.status === 'temporary_failure').length;
  const wrong = required.filter((r) => r.status !== 'verified' && r.status !== 'temporary_failure').length;
  // No answer says nothing about the records: the headline tells it apart from a wrong one.
  const status = allFound
    ? 'all required records found'
    : wrong === 0
      ? `DNS did not answer (${unanswered} of ${required.length} required records); try again later`
      : `records missing or wrong${unanswered > 0 ? `; DNS did not answer for ${unanswered}` : ''}`;
  // For scripts and monitoring: non-zero while a required record is missing or wrong.
  if (!allFound) process.exitCode = 1;
  if (json) {
    return printJson({
      id: diagnosis.domain.id,
      name: diagnosis.domain.name,
      verdict: status,
      spf_lookups: diagnosis.spfLookups,
      hints: diagnosis.hints,
      records: diagnosis.records,
    });
  }
  await renderElement(
    <DnsRecordsTable
      domain={diagnosis.domain.name}
      status={status}
      width={terminalWidth()}
      hints={diagnosis.hints}
      rows={diagnosis.records.map((r) => ({
        record: r.required
          ? r.record
          : `${r.record} (${r.record === 'Tracking' ? 'for tracking' : r.record === 'Receiving' ? 'for receiving' : 'recommended'})`,
        type: r.type,
        name: r.name,
        expected: r.type === 'MX' ? `${r.priority ?? 10} ${r.value}` : r.value,
        live: r.live ?? '',
        status: r.status,
        verdict: r.detail ?? '',
      }))}
    />,
  );
}
