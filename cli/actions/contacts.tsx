import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { render, Text } from 'ink';
import type { JobQueue } from '../../server/job-queue.js';
import { createLogger } from '../../server/logger.js';
import { sqlQuery } from '../../server/db/query.js';
import {
  type ContactImportOptions,
  createContactImport,
} from '../../server/services/contact-imports/create-contact-import.js';
import type { ColumnMap } from '../../server/services/contact-imports/csv-file.js';
import {
  type ContactImportRecord,
  getContactImport,
} from '../../server/services/contact-imports/get-contact-imports.js';
import { runContactImport } from '../../server/services/contact-imports/run-contact-import.js';
import { ProgressBar } from '../components/ProgressBar.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

const FIELDS = new Set(['email', 'first_name', 'last_name', 'unsubscribed']);

/** `email=Email,first_name=First Name,plan=Plan`: the four contact fields, any other key a property. */
function parseColumnMap(spec: string | undefined): ColumnMap | undefined {
  if (spec === undefined) return undefined;
  const map: ColumnMap = {};
  for (const pair of spec.split(',')) {
    const at = pair.indexOf('=');
    const key = pair
      .slice(0, at)
      .trim()
      .replace(/^properties\./, '');
    const column = pair.slice(at + 1).trim();
    if (at <= 0 || !key || !column) throw new Error(`--map: "${pair}" is not field=Column`);
    if (FIELDS.has(key)) map[key as keyof Omit<ColumnMap, 'properties'>] = column;
    else (map.properties ??= {})[key] = { column };
  }
  return map;
}

/** Ends a dry run's transaction: everything it wrote is rolled back. */
class DryRun extends Error {}

const kib = (bytes: number) => Math.ceil(bytes / 1024);

export async function importContacts(
  file: string,
  options: {
    map?: string;
    onConflict: 'skip' | 'upsert';
    segment?: string[];
    topic?: string[];
    dryRun?: boolean;
    team?: string;
  },
  cmd: Command,
): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const size = statSync(file).size;
  const importOptions: ContactImportOptions = {
    columnMap: parseColumnMap(options.map),
    onConflict: options.onConflict,
    segments: options.segment ?? [],
    topics: (options.topic ?? []).map((t) => {
      const [id, subscription] = t.split(':') as [string, 'opt_in' | 'opt_out'];
      return { id, subscription };
    }),
  };
  const label = options.dryRun ? 'Checking' : 'Importing';
  const bar = (rows: number, bytes: number) => (
    <ProgressBar label={`${label} ${basename(file)}: ${rows} rows, KiB`} done={kib(bytes)} total={kib(size)} />
  );
  const progress =
    !json && process.stderr.isTTY ? render(bar(0, 0), { stdout: process.stderr, patchConsole: false }) : null;
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const outcome = await withDatabase(async ({ orm, config }) => {
      const team = await resolveTeam(orm, options.team);
      // Run here, not by a worker: nothing to enqueue. Interrupted, the import stays in progress and a
      // worker's sweeper resumes it where this stopped.
      const jobs: JobQueue = { enqueue: async () => undefined, wake: () => undefined, stopping: stop.signal };
      const deps = { orm, config, jobs, logger: createLogger('silent'), clock: () => new Date() };
      const work = async () => {
        const { id } = await createContactImport(deps, team.id, {
          file: createReadStream(file, { highWaterMark: 1 << 20 }),
          fileName: basename(file),
          options: () => importOptions,
        });
        let status = await runContactImport(deps, id, (p) => progress?.rerender(bar(p.rows, p.bytes)));
        while (status === 'in_progress' && !stop.signal.aborted)
          status = await runContactImport(deps, id, (p) => progress?.rerender(bar(p.rows, p.bytes)));
        let record: ContactImportRecord = await getContactImport(deps, team.id, id);
        // Taken over by a worker (it found the import first): follow it to the end.
        while (!stop.signal.aborted && (record.status === 'queued' || record.status === 'in_progress')) {
          await sleep(1_000);
          record = await getContactImport(deps, team.id, id);
          progress?.rerender(bar(record.rowsDone, record.bytesDone));
        }
        const errors = await sqlQuery<{ row: number; email: string | null; message: string }>(
          orm.em,
          'SELECT "row", email, message FROM contact_import_error WHERE contact_import_id = ? ORDER BY "row" LIMIT 10',
          [id],
        );
        return { record, errors };
      };
      if (!options.dryRun) return { team, ...(await work()) };
      let checked: Awaited<ReturnType<typeof work>> | undefined;
      try {
        await orm.em.transactional(async () => {
          checked = await work();
          throw new DryRun();
        });
      } catch (err) {
        if (!(err instanceof DryRun)) throw err;
      }
      return { team, ...checked! };
    });
    progress?.unmount();
    const { team, record, errors } = outcome;
    const result = {
      id: options.dryRun ? null : record.id,
      team_id: team.id,
      dry_run: Boolean(options.dryRun),
      status: record.status,
      counts: record.counts,
      failure: record.failure,
      first_errors: errors,
    };
    if (json) return printJson(result);
    const c = record.counts;
    // Through Ink, so the headline wraps at a terminal's edge and stays one line piped.
    await renderElement(
      <Text>
        {`${options.dryRun ? 'Dry run: would import' : record.status === 'completed' ? 'Imported' : `Import ${record.status}:`} ` +
          `${c.total} rows of ${basename(file)} for team ${team.name} (${team.id}): ${c.created} created, ${c.updated} updated, ` +
          `${c.skipped} skipped, ${c.failed} failed`}
      </Text>,
    );
    if (record.failure) process.stdout.write(`Stopped: ${record.failure}\n`);
    if (errors.length > 0) {
      await renderTable({
        columns: ['ROW', 'EMAIL', 'PROBLEM'],
        rows: errors.map((e) => [String(e.row), e.email ?? '', e.message]),
      });
      if (!options.dryRun)
        process.stdout.write(`All refused rows (the first 1,000): GET /contacts/imports/${record.id}/errors\n`);
    }
    if (stop.signal.aborted)
      process.stdout.write(`Interrupted: import ${record.id} continues in a worker from row ${c.total + 1}\n`);
  } finally {
    process.off('SIGINT', onInterrupt);
    progress?.unmount();
  }
}
