/**
 * The embedded database: PGlite (Postgres compiled to WebAssembly) in this process, with its
 * data under a folder, served on a loopback port by pglite-socket so that the very same
 * `postgres` driver code talks to it. One connection at a time is what PGlite supports, so
 * callers open pools of size 1 against it.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
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

/** The embedded database served from a worker thread, which can be stopped mid-statement. */
export interface WorkerEmbeddedDatabase extends EmbeddedDatabase {
  /** Stops the worker at once, in the middle of a statement if need be: its clients see the connection close. */
  kill(): Promise<void>;
}

/**
 * The worker: opens PGlite and serves it as startEmbedded does, posts the address (or the error),
 * and on 'close' stops both and ends. Plain JavaScript evaluated as given, importing the two
 * packages by the absolute addresses it is handed: the CLI may run bundled or through tsx, from any
 * working directory.
 */
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
(async () => {
  const { PGlite } = await import(workerData.pglite);
  const { PGLiteSocketServer } = await import(workerData.socket);
  const db = await PGlite.create(workerData.dataDir);
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 4 });
  await server.start();
  parentPort.once('message', async () => {
    await server.stop();
    await db.close();
    parentPort.close();
  });
  parentPort.postMessage({ conn: server.getServerConn() });
})().catch((err) => parentPort.postMessage({ error: err instanceof Error ? err.message : String(err) }));
`;

/**
 * The embedded database, like startEmbedded, but run in a worker thread. PGlite runs a statement
 * without returning to its thread's event loop, so in-process nothing else runs meanwhile: not a
 * timer of the caller's, nor PGlite's own statement_timeout (its timer is a JavaScript one on that
 * same thread, so the setting is taken and never fires). In a worker, this thread stays free, and
 * `kill` ends a statement that runs too long. That stop is unclean, like a crash; `daybook sql`,
 * its one user, kills only inside a read-only transaction, and PGlite opens the folder again
 * afterwards (test/cli/sql-role.test.ts shows it).
 */
export async function startEmbeddedWorker(dir: string): Promise<WorkerEmbeddedDatabase> {
  const dataDir = resolve(dir, 'pgdata');
  mkdirSync(dataDir, { recursive: true });
  const require = createRequire(import.meta.url);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      pglite: pathToFileURL(require.resolve('@electric-sql/pglite')).href,
      socket: pathToFileURL(require.resolve('@electric-sql/pglite-socket')).href,
      dataDir,
    },
  });
  const exited = new Promise<void>((done) => worker.once('exit', () => done()));
  const started = new Promise<string>((done, fail) => {
    worker.once('message', (m: { conn?: string; error?: string }) =>
      m.conn ? done(m.conn) : fail(new Error(`the embedded database did not start: ${m.error}`)),
    );
    // An error after the start shows as the connection closing, to the client that uses it.
    worker.on('error', (err) => fail(new Error(`the embedded database did not start: ${err.message}`)));
    exited.then(() => fail(new Error('the embedded database did not start: its worker ended')));
  });
  let conn: string;
  try {
    conn = await started;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  return {
    url: `postgres://postgres@${conn}/postgres?sslmode=disable`,
    dataDir,
    close: async () => {
      worker.postMessage('close');
      await exited;
    },
    kill: async () => {
      await worker.terminate();
    },
  };
}
