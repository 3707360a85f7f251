// A loopback port for a child to listen on. No side effects on import, so
// tests share it with the bench.
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
