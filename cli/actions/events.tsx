import type { Command } from 'commander';
import { Box } from 'ink';
import { presentEvent, presentEventListItem } from '../../server/http/routes/events/event.presenter.js';
import { listEventDefinitions, requireEventDefinition } from '../../server/services/events/event-definitions.js';
import { Fields } from '../components/Fields.js';
import { Table } from '../components/Table.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable, terminalWidth } from '../lib/render.js';
import { shortTime } from '../lib/text.js';
import { eventObject, resolveTeam } from '../services/resolve-team.js';

const schemaText = (schema: Record<string, string> | null) =>
  schema
    ? Object.entries(schema)
        .map(([key, type]) => `${key}: ${type}`)
        .join(', ')
    : 'any payload';

export async function list(options: { team?: string; limit: number }, cmd: Command): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    return (await listEventDefinitions({ orm }, team.id, { limit: options.limit })).data.map(presentEventListItem);
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['ID', 'NAME', 'SCHEMA'],
    rows: rows.map((e) => [e.id, e.name, schemaText(e.schema)]),
    empty: 'No event definitions.',
  });
}

export async function show(idOrName: string, options: { team?: string }, cmd: Command): Promise<void> {
  const event = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, eventObject(idOrName));
    return presentEvent(await requireEventDefinition({ orm }, team.id, idOrName));
  });
  if (cmd.optsWithGlobals().json) return printJson(event);
  const width = terminalWidth();
  await renderElement(
    <Box flexDirection="column">
      <Fields
        width={width}
        rows={[
          ['Event', event.id],
          ['Name', event.name],
          ['Created', shortTime(event.created_at)],
          ['Updated', shortTime(event.updated_at)],
        ]}
      />
      <Table
        width={width}
        columns={['KEY', 'TYPE']}
        rows={Object.entries(event.schema ?? {})}
        empty="No schema: any payload is accepted."
      />
    </Box>,
  );
}
