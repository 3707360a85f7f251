// How a synthetic HTTP upstream runs under the harness: keep-alive for the
// whole run, on 127.0.0.1 port 0 with a {"port","pid",…} start-up line, and
// gone when told to stop or when the harness (its parent) goes.
import type { Server } from 'node:http';

/** `beforeClose` ends what would keep a connection open (e.g. requests that hang on purpose). */
export function serveLocal(server: Server, hello: (port: number) => Record<string, unknown> = () => ({}), beforeClose: () => void = () => undefined): void {
  server.keepAliveTimeout = 60_000;
  server.maxRequestsPerSocket = 0;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    process.stdout.write(`${JSON.stringify({ port: address.port, pid: process.pid, ...hello(address.port) })}\n`);
  });
  const shutdown = (): void => {
    beforeClose();
    server.closeAllConnections();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.on('disconnect', shutdown);
}
