import pg from 'pg';

export interface SessionProbe {
  /** Two connections open at once were served by one server process: a transaction (or statement) pooler. */
  transactionPooled: boolean;
  /** The server reports another port than the URL's: a pooler or proxy in between, of whatever kind. */
  inBetween: boolean;
  /** What was checked, in words, for the report. */
  detail: string;
}

/**
 * Opens two connections to `url` and asks each for its server process, one after the other while
 * both stay open. Directly each has its own backend; a transaction pooler hands the second one the
 * server connection the first released when its statement ended (PgBouncer reuses the most recent).
 */
export async function probeSessions(url: string): Promise<SessionProbe> {
  const clients = [0, 1].map(
    () => new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000, application_name: 'postlane-doctor' }),
  );
  for (const client of clients) client.on('error', () => {});
  try {
    const rows: { pid: number; port: number | null }[] = [];
    for (const client of clients) {
      await client.connect();
      rows.push(
        (
          await client.query<{ pid: number; port: number | null }>(
            'SELECT pg_backend_pid() AS pid, inet_server_port() AS port',
          )
        ).rows[0]!,
      );
    }
    const urlPort = Number(new URL(url).port || 5432);
    const serverPort = rows[0]!.port;
    const transactionPooled = rows[0]!.pid === rows[1]!.pid;
    const ports =
      serverPort === null
        ? 'over a socket'
        : serverPort === urlPort
          ? `server port ${serverPort} as in the URL`
          : `URL port ${urlPort}, server port ${serverPort}: something in between`;
    const pids = transactionPooled
      ? `two open connections shared server process ${rows[0]!.pid}`
      : `two open connections had server processes ${rows[0]!.pid} and ${rows[1]!.pid}`;
    return { transactionPooled, inBetween: serverPort !== null && serverPort !== urlPort, detail: `${pids}, ${ports}` };
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
  }
}
