import { createServer, type RequestListener, type Server } from 'node:http';
import type { Config } from '../../config/index.js';

type TimeoutConfig = Pick<
  Config,
  | 'POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS'
  | 'POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS'
  | 'POSTLANE_HTTP_KEEP_ALIVE_TIMEOUT_SECONDS'
>;

/**
 * The Node HTTP server with explicit limits on slow clients: headers, the whole request (headers
 * and body), and idle keep-alive connections. Node checks the first two on a timer of its own
 * (30 s by default, so a 10 s limit held for up to 40 s); here it runs every second at most.
 */
export function createHttpServer(listener: RequestListener, config: TimeoutConfig): Server {
  const headersTimeout = config.POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS * 1000;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: config.POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
      connectionsCheckingInterval: Math.min(1_000, headersTimeout / 2),
    },
    listener,
  );
  server.keepAliveTimeout = config.POSTLANE_HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000;
  return server;
}
