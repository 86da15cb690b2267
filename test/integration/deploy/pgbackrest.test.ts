import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { Resend } from 'resend';
import { afterAll, expect, it } from 'vitest';
import { type ChaosStack, startStackOn } from '../../support/chaos.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { createThrowawayCluster, type ThrowawayCluster } from '../../support/throwaway-cluster.js';
import { until } from '../../support/until.js';

/**
 * The shipped pgBackRest configuration (docs/deploy/pgbackrest.conf and postgresql-archiving.conf), run
 * by Debian's pgbackrest against a throwaway cluster under a running Postlane: stanza, full backup,
 * WAL archiving; mail accepted before and after a chosen instant; a point-in-time restore to that
 * instant into a fresh data directory, and Postlane started on it. Only the paths differ from the
 * shipped files (the repository, the data directory, the port and socket of the throwaway cluster).
 */
const ROOT = new URL('../../../', import.meta.url).pathname;
const BEFORE = 3;
const AFTER = 2;

let stack: ChaosStack | undefined;
let restored: ThrowawayCluster | undefined;
const sink = await startSmtpSink();
afterAll(async () => {
  await stack?.close();
  await restored?.remove();
  await sink.close();
});

it('a full backup plus archived WAL restores to a point in time, and Postlane runs on it', async () => {
  const archiving = readFileSync(join(ROOT, 'docs/deploy/postgresql-archiving.conf'), 'utf8');
  stack = await startStackOn(() => createThrowawayCluster({ settings: archiving }), {
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]),
  });
  const { cluster } = stack;
  const folder = dirname(cluster.data);
  const conf = join(folder, 'pgbackrest.conf');
  const pgbackrest = (args: string[]) => cluster.exec('pgbackrest', [`--config=${conf}`, '--stanza=postlane', ...args]);
  // The shipped archive_command, pointed at this config file (until then its archiving fails and is retried).
  const command = /^archive_command = '(.*)'$/m
    .exec(archiving)![1]!
    .replace('pgbackrest ', `pgbackrest --config=${conf} `);
  await stack.query(`ALTER SYSTEM SET archive_command = '${command}'`);
  await stack.query('SELECT pg_reload_conf()');
  const shipped = readFileSync(join(ROOT, 'docs/deploy/pgbackrest.conf'), 'utf8');
  writeFileSync(
    conf,
    shipped
      .replace(
        'repo1-path=/var/lib/pgbackrest',
        `repo1-path=${folder}/repo\nlock-path=${folder}/lock\nlog-path=${folder}`,
      )
      .replace(/^pg1-path=.*$/m, `pg1-path=${cluster.data}\npg1-port=${cluster.port}\npg1-socket-path=${folder}`),
    { mode: 0o644 },
  );
  await pgbackrest(['stanza-create']);
  await pgbackrest(['check']);
  await pgbackrest(['--type=full', 'backup']);

  // Mail accepted before the instant the restore aims at, and after it; no worker yet, so it stays queued.
  const api = await stack.startApi();
  const token = stack.headers.authorization.slice('Bearer '.length);
  const resend = new Resend(token, { baseUrl: stack.apiUrl });
  const sendAll = (prefix: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const { data, error } = await resend.emails.send({
          from: 'PITR <news@chaos.test>',
          to: `${prefix}-${i}@example.com`,
          subject: `${prefix} ${i}`,
          text: 'Hello',
        });
        if (error) throw new Error(error.message);
        return data!.id;
      }),
    );
  const before = await sendAll('before', BEFORE);
  const [{ target }] = (await stack.query<{ target: string }>(
    `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' AS target`,
  )) as [{ target: string }];
  const after = await sendAll('after', AFTER);
  // check switches to a new WAL segment and waits until it is archived: the mail after the instant is in the archive too.
  await pgbackrest(['check']);
  api.child.kill('SIGTERM');
  await api.exited;

  const restoreStarted = Date.now();
  restored = await createThrowawayCluster({
    fill: (data, exec) =>
      exec('pgbackrest', [
        `--config=${conf}`,
        '--stanza=postlane',
        `--pg1-path=${data}`,
        '--type=time',
        `--target=${target}`,
        '--target-action=promote',
        // A restored copy must not archive into the repository of the database it came from.
        '--archive-mode=off',
        'restore',
      ]),
  });
  const restoredDb = restored.url('postlane');
  await until(async () => {
    const client = new pg.Client({ connectionString: restoredDb });
    await client.connect();
    try {
      return !(await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r;
    } finally {
      await client.end();
    }
  }, 60_000);
  const restoreSeconds = (Date.now() - restoreStarted) / 1000;

  const [restoredApi] = [
    stack.spawn('api', undefined, { DATABASE_URL: restoredDb }),
    stack.spawn('worker', undefined, { DATABASE_URL: restoredDb }),
  ];
  await restoredApi!.waitForOutput(/postlane started/, 60_000);
  for (const id of after) expect((await resend.emails.get(id)).error).toMatchObject({ statusCode: 404 });
  const expected = before.map((id) => `<${id}@chaos.test>`);
  await until(async () => expected.every((id) => sink.received.some((mail) => mail.parsed.messageId === id)), 60_000);
  expect(sink.received.map((mail) => mail.parsed.messageId).sort()).toEqual([...expected].sort());
  process.stderr.write(`[pgbackrest] point-in-time restore to ${target}: ${restoreSeconds.toFixed(1)} s\n`);
}, 240_000);
