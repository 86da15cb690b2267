/**
 * `npm run bench -- --only ids`: WAL bytes per accepted email (its `email` row and one recipient)
 * with random UUID v4 ids (before) beside time-ordered UUID v7 ids (now), on an empty table and
 * on one pre-filled with `--rows` emails holding v4 ids, as an upgraded database does. Each figure
 * follows a CHECKPOINT, so every page an insert touches first costs its full-page image, as it
 * does in production once per checkpoint; random keys touch a random index page per insert.
 *
 *   node --import tsx test/bench/ids.bench.ts [--json] [--rows 2000000] [--emails 20000]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    rows: { type: 'string', default: '2000000' },
    emails: { type: 'string', default: '20000' },
  },
});
const ROWS = Number(args.rows);
const EMAILS = Number(args.emails);
/** Rows per statement, as the email writer's group commit shares one under load. */
const PER_STATEMENT = 50;
const FILL_CHUNK = 200_000;
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

/** `count` emails with one recipient each, ids from `generator`, sent a day ago or queued now. */
const emailsSql = (generator: string, count: number, sent: boolean) => `
  WITH e AS (
    INSERT INTO email (id, created_at, updated_at, team_id, "from", "to", cc, bcc, reply_to, subject, html, text, headers, tags,
                       region, message_id, status, last_event, send_after, attempts)
    SELECT ${generator}(), ${sent ? "now() - interval '1 day'" : 'now()'}, now(), $1, 'Bench <bench@example.com>', '{user@example.com}', '{}', '{}', '{}',
           'Hello', '<p>Hi</p>', NULL, '{}', '[]', 'us-east-1', '<' || g || '@example.com>', ${sent ? "'sent', 'delivered'" : "'queued', 'queued'"}, now(), 0
      FROM generate_series(1, ${count}) AS g
    RETURNING id, created_at
  )
  INSERT INTO email_recipient (id, created_at, email_id, kind, address, status)
  SELECT ${generator}(), created_at, id, 'to', 'user@example.com', ${sent ? "'accepted'" : "'pending'"} FROM e`;

/** WAL per email with `generator`'s ids at 0 and at ROWS emails, on a database of its own. */
async function measure(generator: string): Promise<number[]> {
  const dbName = uniqueDatabaseName('postlane_bench_ids');
  await adminQuery(`CREATE DATABASE "${dbName}"`);
  try {
    const config = loadConfig({
      POSTLANE_CONFIG: '/nonexistent/postlane.json',
      DATABASE_URL: databaseUrl(dbName),
      POSTLANE_LOG_LEVEL: 'silent',
      POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    });
    const orm = await initOrm(config);
    await migrate(config);
    await orm.close();
    const client = new pg.Client({ connectionString: config.DATABASE_URL });
    await client.connect();
    try {
      const [{ id: teamId }] = (
        await client.query(
          `INSERT INTO team (id, name, created_at) VALUES (gen_random_uuid(), 'Bench', now()) RETURNING id`,
        )
      ).rows;
      const figures: number[] = [];
      let filled = 0;
      for (const size of [0, ROWS]) {
        for (; filled < size; filled += FILL_CHUNK) {
          progress(
            `${generator}: filling ${filled.toLocaleString()} of ${size.toLocaleString()} emails (v4 ids, as an upgraded database holds)…`,
          );
          await client.query(emailsSql('gen_random_uuid', Math.min(FILL_CHUNK, size - filled), true), [teamId]);
        }
        await client.query('VACUUM ANALYZE email, email_recipient');
        progress(`${generator}: measuring ${EMAILS.toLocaleString()} inserts at ${filled.toLocaleString()} emails…`);
        await client.query('CHECKPOINT');
        const before = (await client.query('SELECT pg_current_wal_insert_lsn() AS lsn')).rows[0].lsn;
        for (let done = 0; done < EMAILS; done += PER_STATEMENT)
          await client.query(emailsSql(generator, PER_STATEMENT, false), [teamId]);
        const bytes = (await client.query('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1) AS bytes', [before]))
          .rows[0].bytes;
        figures.push(Math.round(Number(bytes) / EMAILS));
      }
      return figures;
    } finally {
      await client.end();
    }
  } finally {
    await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
}

const v4 = await measure('gen_random_uuid');
const v7 = await measure('postlane_uuid_v7');
const results = [0, ROWS].map((rows, at) => ({ rows, v4: v4[at]!, v7: v7[at]! }));

const [empty, full] = results as [(typeof results)[0], (typeof results)[0]];
const summary = {
  loadAverageBefore: loadBefore,
  emailsMeasured: EMAILS,
  perStatement: PER_STATEMENT,
  sizes: results.map((r) => ({ ...r, v7ToV4: Number((r.v7 / r.v4).toFixed(2)) })),
  growth: { v4: Number((full.v4 / empty.v4).toFixed(2)), v7: Number((full.v7 / empty.v7).toFixed(2)) },
};
if (args.json) console.log(JSON.stringify(summary, null, 2));
else {
  console.log(
    `\nWAL bytes per accepted email (email row + 1 recipient, ${PER_STATEMENT} per statement; load average before: ${loadBefore})`,
  );
  for (const r of summary.sizes)
    console.log(
      `${r.rows.toLocaleString().padStart(12)} emails   v4 ${String(r.v4).padStart(6)} B   v7 ${String(r.v7).padStart(6)} B   v7/v4 ${r.v7ToV4}`,
    );
  console.log(`growth, full/empty: v4 ${summary.growth.v4}x, v7 ${summary.growth.v7}x (target <= 1.5x)`);
}
