/**
 * The embedded database: PGlite (Postgres compiled to WebAssembly) in this process, with its
 * data under a folder, served on a loopback port by pglite-socket so that the very same
 * `postgres` driver code talks to it. One connection at a time is what PGlite supports, so
 * callers open pools of size 1 against it.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDatabase {
  url: string;
  dataDir: string;
  close(): Promise<void>;
}

/** Opens (creating when missing) the embedded database in `dir` and serves it on 127.0.0.1. */
export async function startEmbedded(dir: string): Promise<EmbeddedDatabase> {
  const dataDir = resolve(dir, 'pgdata');
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 4 });
  await server.start();
  const conn = server.getServerConn();
  return {
    url: `postgres://postgres@${conn}/postgres?sslmode=disable`,
    dataDir,
    close: async () => {
      await server.stop();
      await db.close();
    },
  };
}
