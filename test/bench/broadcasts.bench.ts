/**
 * `npm run bench -- --only broadcasts`: a broadcast to 100,000 contacts into the capture provider,
 * worked by a real worker process (`postlane serve --role worker`, compiled). Reports how fast the
 * broadcast is written into the outbox (emails per second), how fast it is delivered, and the
 * worker's peak RSS, beside a baseline measured in the same run on the same database: the same
 * rows written by the outbox's own statement, a batch of the same size at a time, from a plain loop
 * (what a broadcast costs beyond the write itself is the ratio). Then the writing side
 * alone: a second broadcast to the same contacts walked by a process that runs no deliveries
 * (broadcast-writer.mjs), with its memory at rest and at peak. `--cpu-prof DIR` writes the worker's
 * CPU profile there.
 *
 *   node --import tsx test/bench/broadcasts.bench.ts [--json] [--contacts 100000] [--timeout 180] [--cpu-prof DIR]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { AgendaJobs } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { parseMailbox, type Mailbox } from '../../server/mail/address.js';
import { broadcastRegion, createBroadcast } from '../../server/services/broadcasts/save-broadcast.js';
import { cancelBroadcast, sendBroadcast } from '../../server/services/broadcasts/send-broadcast.js';
import { newId } from '../../server/db/ids.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import type { QueuedEmailRow } from '../../server/services/outbox/queued-email-writer.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { SERVICE_NODE_FLAGS, spawnPostlane } from '../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_EMAILS_PER_SECOND = 2_000;
const TARGET_RSS_MB = 300;
const TARGET_WRITER_RATIO = 0.5;
const BATCH = 1_000;

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    contacts: { type: 'string', default: '100000' },
    timeout: { type: 'string', default: '180' },
    'cpu-prof': { type: 'string' },
  },
});
const CONTACTS = Number(args.contacts);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));
const html =
  '<p>Hello {{{FIRST_NAME|there}}},</p><p>Our November news.</p><p><a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>';

/** Resident set size of a process now (VmRSS), or its peak so far (VmHWM: Linux keeps the high-water mark), in MB. */
const rssMb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  });
  const logger = createLogger(config.POSTLANE_LOG_LEVEL);
  const orm = await initOrm(config);
  await migrate(config);
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  const jobs = new AgendaJobs(config, logger, 'api');
  await jobs.ready();
  const deps = createDeps({ config, orm, jobs, logger });
  try {
    const team = await RequestContext.create(orm.em, () => createTeam(deps, { name: 'Bench' }));
    const {
      rows: [segment],
    } = await pool.query(
      `INSERT INTO segment (id, created_at, team_id, name) VALUES (gen_random_uuid(), now(), $1, 'All') RETURNING id`,
      [team.id],
    );
    progress(`${CONTACTS} contacts…`);
    await pool.query(
      `WITH c AS (
         INSERT INTO contact (id, created_at, updated_at, team_id, email, first_name, unsubscribed, properties)
         SELECT gen_random_uuid(), now(), now(), $1, 'reader' || g || '@example.com', 'Reader ' || g, false, '{}' FROM generate_series(1, $2) g RETURNING id)
       INSERT INTO segment_member (segment_id, contact_id, created_at) SELECT $3, id, now() FROM c`,
      [team.id, CONTACTS, segment.id],
    );
    await pool.query('VACUUM ANALYZE');
    // The set-up's WAL flushed now, not by a checkpoint in the middle of the phases measured.
    await pool.query('CHECKPOINT');

    const sender = { teamId: team.id, domainId: null };
    const broadcast = await RequestContext.create(orm.em, () =>
      createBroadcast(deps, sender, {
        segmentId: segment.id,
        from: parseMailbox('News <news@acme.test>') as Mailbox,
        subject: 'November news',
        html,
      }),
    );
    let measured: Omit<Parameters<typeof report>[0], 'writerAlone' | 'baselineRate'>;
    const worker = spawnPostlane(
      ['serve', '--role', 'worker'],
      { DATABASE_URL: config.DATABASE_URL, POSTLANE_LOG_LEVEL: 'warn', POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1' },
      [...SERVICE_NODE_FLAGS, ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : [])],
    );
    try {
      // At rest: once the started worker's memory has settled (a loaded machine starts it slowly).
      let restMb = 0;
      for (let tries = 0; tries < 30; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const now = rssMb(worker.child.pid!, 'VmRSS');
        if (Math.abs(now - restMb) < 1) break;
        restMb = now;
      }
      progress('postlane: broadcast to the capture provider…');
      const start = performance.now();
      await RequestContext.create(orm.em, () => sendBroadcast(deps, sender, broadcast.id, null));
      let writtenAt = 0;
      let sentAt = 0;
      let peakMb = 0;
      const deadline = start + Number(args.timeout) * 1000;
      while (performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        peakMb = rssMb(worker.child.pid!, 'VmHWM');
        const {
          rows: [state],
        } = await pool.query(`SELECT status, expanded FROM broadcast WHERE id = $1`, [broadcast.id]);
        if (state.expanded && !writtenAt) writtenAt = performance.now();
        if (state.status === 'sent') {
          sentAt = performance.now();
          break;
        }
      }
      const {
        rows: [counts],
      } = await pool.query(
        `SELECT count(*)::int AS emails, count(*) FILTER (WHERE status = 'sent')::int AS sent, count(DISTINCT "to"[1])::int AS recipients FROM email WHERE broadcast_id = $1`,
        [broadcast.id],
      );
      const {
        rows: [captured],
      } = await pool.query('SELECT count(*)::int AS n FROM captured_message');
      measured = {
        writeRate: writtenAt ? CONTACTS / ((writtenAt - start) / 1000) : 0,
        deliverRate: sentAt
          ? counts.sent / ((sentAt - start) / 1000)
          : counts.sent / ((performance.now() - start) / 1000),
        finished: sentAt > 0,
        peakMb,
        restMb,
        counts: { ...counts, captured: captured.n },
      };
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    // The first broadcast is measured; it must not hold the region's turn (unless it finished since the last look).
    if (!measured.finished) {
      await RequestContext.create(orm.em, () => cancelBroadcast(deps, team.id, broadcast.id)).catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 409) throw err;
      });
    }
    progress('postlane: the writing side alone…');
    const second = await RequestContext.create(orm.em, async () => {
      const created = await createBroadcast(deps, sender, {
        segmentId: segment.id,
        from: parseMailbox('News <news@acme.test>') as Mailbox,
        subject: 'November news',
        html,
      });
      await sendBroadcast(deps, sender, created.id, null);
      return created;
    });
    const writer = spawn(
      process.execPath,
      [new URL('./broadcast-writer.mjs', import.meta.url).pathname, second.id, String(CONTACTS)],
      {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: config.DATABASE_URL, POSTLANE_SECRET_KEY: TEST_SECRET_KEY },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    writer.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await once(writer, 'exit');
    // Baseline, last (its 100,000 rows and their WAL would weigh on the phases measured after it):
    // the same rows written by the outbox's own statement (QueuedEmailWriter.writeTogether, as a
    // broadcast's pages are), a batch at a time from a plain loop, with no segment paging, rendering,
    // suppression or quota around it.
    progress('baseline: the outbox statement from a loop…');
    const region = await RequestContext.create(orm.em, () => broadcastRegion(deps, sender, 'news@acme.test'));
    const baselineStart = performance.now();
    for (let at = 0; at < CONTACTS; at += BATCH) {
      const createdAt = new Date().toISOString();
      const rows = Array.from({ length: Math.min(BATCH, CONTACTS - at) }, (_, i): QueuedEmailRow => {
        const id = newId();
        const to = `reader${at + i}@example.com`;
        return {
          id,
          team_id: team.id,
          from: 'News <news@acme.test>',
          to: [to],
          cc: [],
          bcc: [],
          reply_to: [],
          subject: 'November news',
          html: html.replace('{{{FIRST_NAME|there}}}', `Reader ${at + i}`),
          text: null,
          headers: { 'List-Unsubscribe': `<https://postlane.test/unsubscribe/${id}>` },
          tags: [],
          attachments: [],
          region,
          message_id: `<${id}@acme.test>`,
          created_at: createdAt,
          scheduled_at: null,
          topic_id: null,
          park_until: null,
          recipients: [{ kind: 'to', address: to }],
        };
      });
      await RequestContext.create(orm.em, () => deps.emailWriter.writeTogether(rows));
    }
    const baselineRate = CONTACTS / ((performance.now() - baselineStart) / 1000);
    report({ ...measured, baselineRate, writerAlone: JSON.parse(output.trim().split('\n').at(-1)!) });
  } finally {
    await jobs.stop(1_000);
    await deps.providers.close();
    await orm.close();
    await pool.end();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}

function report(r: {
  baselineRate: number;
  writeRate: number;
  deliverRate: number;
  finished: boolean;
  peakMb: number;
  restMb: number;
  counts: { emails: number; sent: number; recipients: number; captured: number };
  writerAlone: { restMb: number; peakMb: number; writeRate: number };
}) {
  const sanity = {
    ...r.counts,
    oneEmailPerContact: r.counts.emails === CONTACTS && r.counts.recipients === CONTACTS,
    finished: r.finished,
  };
  if (!sanity.oneEmailPerContact) process.exitCode = 1;
  const targets = {
    emailsPerSecond: {
      target: TARGET_EMAILS_PER_SECOND,
      value: Math.round(r.deliverRate),
      met: r.deliverRate >= TARGET_EMAILS_PER_SECOND,
    },
    workerPeakRssMb: { target: TARGET_RSS_MB, value: Math.round(r.peakMb), met: r.peakMb < TARGET_RSS_MB },
  };
  const figures = {
    contacts: CONTACTS,
    loadAverageBefore: loadBefore,
    baselineRowsPerSecond: Math.round(r.baselineRate),
    writtenEmailsPerSecond: Math.round(r.writeRate),
    writeRatio: Number((r.writeRate / r.baselineRate).toFixed(2)),
    deliveredEmailsPerSecond: Math.round(r.deliverRate),
    deliverRatio: Number((r.deliverRate / r.baselineRate).toFixed(2)),
    workerRestRssMb: Math.round(r.restMb),
    workerPeakRssMb: Math.round(r.peakMb),
    writerAloneEmailsPerSecond: r.writerAlone.writeRate,
    writerAloneRatio: Number((r.writerAlone.writeRate / r.baselineRate).toFixed(2)),
    writerAloneRestRssMb: r.writerAlone.restMb,
    writerAlonePeakRssMb: r.writerAlone.peakMb,
  };
  const baseline = `the outbox statement from a loop: ${perSecond(r.baselineRate, 'rows')}`;
  reportHeadlines(
    {
      what: `Broadcast to ${CONTACTS.toLocaleString('en-US')} contacts, delivered`,
      figure: `${perSecond(r.deliverRate, 'emails')}, worker peak ${Math.round(r.peakMb)} MB`,
      baseline,
      ratio: figures.deliverRatio,
      target: targetMet(
        `≥ ${TARGET_EMAILS_PER_SECOND}/s, < ${TARGET_RSS_MB} MB`,
        targets.emailsPerSecond.met && targets.workerPeakRssMb.met,
      ),
    },
    {
      what: 'Broadcast, writing side alone',
      figure: perSecond(r.writerAlone.writeRate, 'emails'),
      baseline,
      ratio: figures.writerAloneRatio,
      target: targetMet(`ratio ≥ ${TARGET_WRITER_RATIO}`, figures.writerAloneRatio >= TARGET_WRITER_RATIO),
    },
  );
  if (args.json) {
    console.log(JSON.stringify({ ...figures, targets, sanity }, null, 2));
    return;
  }
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `\nbroadcast to ${CONTACTS} contacts, capture provider, one worker process (load average before: ${loadBefore})`,
  );
  console.log(
    `baseline (outbox statement, ${BATCH} rows)  ${figures.baselineRowsPerSecond.toString().padStart(7)} rows/s`,
  );
  console.log(
    `postlane: written to the outbox        ${figures.writtenEmailsPerSecond.toString().padStart(7)} emails/s   ratio ${figures.writeRatio}`,
  );
  console.log(
    `postlane: delivered (sent)             ${figures.deliveredEmailsPerSecond.toString().padStart(7)} emails/s   ratio ${figures.deliverRatio}${r.finished ? '' : '  (timed out before the end)'}`,
  );
  console.log(
    `worker RSS at rest → peak               ${figures.workerRestRssMb.toString().padStart(7)} MB → ${figures.workerPeakRssMb} MB`,
  );
  console.log(
    `writing side alone (no deliveries)     ${figures.writerAloneEmailsPerSecond.toString().padStart(7)} emails/s   ratio ${figures.writerAloneRatio}; RSS ${figures.writerAloneRestRssMb} MB at rest → ${figures.writerAlonePeakRssMb} MB peak`,
  );
  console.log(
    `targets: ≥ ${TARGET_EMAILS_PER_SECOND} emails/s delivered ${met(targets.emailsPerSecond.met)}; worker < ${TARGET_RSS_MB} MB ${met(targets.workerPeakRssMb.met)}`,
  );
  console.log(`sanity: ${JSON.stringify(sanity)}`);
}
