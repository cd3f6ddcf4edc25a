/** Loopback ports for the test's own servers. */
import type { Server } from 'node:http';
import { createServer } from 'node:net';

/** A loopback port nobody listens on right now: bound by the kernel's choice, then let go. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port was assigned'))));
    });
  });
}

/** Starts `server` on a loopback port of the kernel's choice; returns its base URL. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}
