// An HTTP proxy on a unix socket (argv[2]) for the fresh-box root, whose network namespace has only
// a loopback: socat carries 127.0.0.1:3128 in there to this socket out here. It tunnels CONNECT
// (https: npm, apt over TLS) and forwards absolute-URI requests (apt over http). Egress only; the
// box's own ports (PostgreSQL, the API) stay inside its namespace.
import { createServer, request } from 'node:http';
import { connect } from 'node:net';

const server = createServer((req, res) => {
  const upstream = request(req.url, { method: req.method, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
server.on('connect', (req, client, head) => {
  const [host, port] = req.url.split(/:(?=\d+$)/);
  const upstream = connect(Number(port) || 443, host, () => {
    client.write('HTTP/1.1 200 Connection established\r\n\r\n');
    upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
});
server.listen(process.argv[2]);
