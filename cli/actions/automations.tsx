import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Box, Text } from 'ink';
import * as v from 'valibot';
import type { AutomationStatus, RunStatus } from '../../server/entities/index.js';
import {
  presentAutomation,
  presentAutomationListItem,
  presentRunListItem,
} from '../../server/http/routes/automations/automation.presenter.js';
import { CreateAutomationBodySchema } from '../../server/http/routes/automations/automations.schemas.js';
import { applyAutomation } from '../../server/services/automations/apply-automation.js';
import { listAutomationRuns } from '../../server/services/automations/automation-runs.js';
import { getAutomation } from '../../server/services/automations/get-automation.js';
import { listAutomations } from '../../server/services/automations/list-automations.js';
import { Fields } from '../components/Fields.js';
import { Table } from '../components/Table.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable, terminalWidth } from '../lib/render.js';
import { shortTime } from '../lib/text.js';
import { automationObject, resolveTeam } from '../services/resolve-team.js';

const clock = () => new Date();

export async function list(
  options: { status?: AutomationStatus; team?: string; limit: number },
  cmd: Command,
): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    const page = await listAutomations({ orm }, team.id, { limit: options.limit }, options.status);
    return page.data.map(presentAutomationListItem);
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['ID', 'NAME', 'STATUS', 'UPDATED'],
    rows: rows.map((a) => [a.id, a.name, a.status, shortTime(a.updated_at)]),
    empty: 'No automations.',
  });
}

export async function show(id: string, options: { team?: string }, cmd: Command): Promise<void> {
  const automation = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, automationObject(id));
    const found = await getAutomation({ orm }, team.id, id);
    return { ...presentAutomation(found.automation, found.graph), version: found.automation.version };
  });
  if (cmd.optsWithGlobals().json) return printJson(automation);
  const width = terminalWidth();
  await renderElement(
    <Box flexDirection="column">
      <Fields
        width={width}
        rows={[
          ['Automation', automation.id],
          ['Name', automation.name],
          ['Status', automation.status],
          ['Version', String(automation.version)],
          ['Created', shortTime(automation.created_at)],
          ['Updated', shortTime(automation.updated_at)],
        ]}
      />
      <Text> </Text>
      <Text bold>Steps</Text>
      <Table
        width={width}
        columns={['KEY', 'TYPE', 'CONFIG']}
        rows={automation.steps.map((s) => [s.key, s.type, JSON.stringify(s.config)])}
      />
      <Text> </Text>
      <Text bold>Connections</Text>
      <Table
        width={width}
        columns={['FROM', 'TO', 'TYPE']}
        rows={automation.connections.map((c) => [c.from, c.to, c.type])}
        empty="No connections."
      />
    </Box>,
  );
}

export async function runs(
  id: string,
  options: { status?: RunStatus[]; team?: string; limit: number },
  cmd: Command,
): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, automationObject(id));
    const page = await listAutomationRuns({ orm }, team.id, id, { limit: options.limit }, options.status ?? []);
    return page.data.map(presentRunListItem);
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['RUN', 'STATUS', 'STARTED', 'COMPLETED'],
    rows: rows.map((r) => [r.id, r.status, shortTime(r.started_at), shortTime(r.completed_at)]),
    empty: 'No runs.',
  });
}

export async function apply(options: { file: string; team?: string }, cmd: Command): Promise<void> {
  // The file is what POST /automations takes, checked by the same schema.
  const parsed = v.safeParse(CreateAutomationBodySchema, JSON.parse(readFileSync(options.file, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `${options.file}: ${parsed.issues.map((i) => `${v.getDotPath(i) ?? '(file)'}: ${i.message}`).join('; ')}`,
    );
  const applied = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    const { automation, result } = await applyAutomation({ orm, clock }, team.id, parsed.output);
    return { ...presentAutomationListItem(automation), version: automation.version, result };
  });
  if (cmd.optsWithGlobals().json) return printJson(applied);
  const verb = { created: 'Created', updated: 'Updated', unchanged: 'Unchanged:' }[applied.result];
  await renderElement(
    <Text>
      {verb} automation {applied.name} ({applied.id}), version {applied.version}, {applied.status}.
    </Text>,
  );
}
