/**
 * Recipient mail servers for the direct delivery test, in a process of its own started inside the
 * test's network namespace: an SMTP server on port 25 of each address given (a JSON argument,
 * `[{ "address": "10.213.4.2", "throttle": 1 }]`). One with `throttle` answers the first that many
 * messages `421 4.7.28`, as Gmail does past the rate it allows an IP, then accepts. Prints
 * `listening` once every server is up, then a line per message, `<address> accepted|throttled
 * <Message-ID> <session>`, and per connection, `<address> open <session> <client address>` and
 * `<address> closed <session>`: what a test needs to count connections at once and messages on each.
 */
import { SMTPServer } from 'smtp-server';

interface MxSpec {
  address: string;
  throttle?: number;
}

const specs = JSON.parse(process.argv[2]!) as MxSpec[];

await Promise.all(
  specs.map(({ address, throttle = 0 }) => {
    let refused = 0;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      disableReverseLookup: true,
      onConnect(session, callback) {
        process.stdout.write(`${address} open ${session.id} ${session.remoteAddress}\n`);
        callback();
      },
      onClose(session) {
        process.stdout.write(`${address} closed ${session.id}\n`);
      },
      onData(stream, session, callback) {
        let head = '';
        stream.on('data', (chunk: Buffer) => {
          if (head.length < 16_384) head += chunk.toString('latin1');
        });
        stream.on('end', () => {
          const id = /^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1] ?? '(none)';
          if (refused < throttle) {
            refused += 1;
            process.stdout.write(`${address} throttled ${id} ${session.id}\n`);
            const err = new Error(
              '4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.',
            );
            return callback(Object.assign(err, { responseCode: 421 }));
          }
          process.stdout.write(`${address} accepted ${id} ${session.id}\n`);
          callback();
        });
      },
    });
    server.on('error', () => {});
    return new Promise<void>((resolve) => server.listen(25, address, resolve));
  }),
);
process.stdout.write('listening\n');
