/**
 * A PgBouncer (Debian's 1.18, installed when missing) in front of the local Postgres, for the
 * tests that show daybook works behind a transaction-pooling bouncer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { ensureDebianTool } from './debian.ts';
import { freePort } from './net.ts';

export interface PgBouncer {
  /** postgres://postgres@127.0.0.1:<port>/<database>, through the bouncer. */
  url: string;
  port: number;
  /** Terminates the bouncer and removes its directory. */
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The database on the local server (127.0.0.1:5432, user postgres) the bouncer serves. */
  database: string;
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user (default_pool_size); 10 unless given. */
  poolSize?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startPgBouncer(opts: PgBouncerOptions): Promise<PgBouncer> {
  const binary = ensureDebianTool('/usr/sbin/pgbouncer', 'pgbouncer');
  const dir = mkdtempSync(join(tmpdir(), 'daybook-pgbouncer-'));
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  const logfile = join(dir, 'pgbouncer.log');
  const userlist = join(dir, 'userlist.txt');
  // auth_type trust still looks the user up in auth_file, with any password.
  writeFileSync(userlist, '"postgres" ""\n');
  writeFileSync(
    ini,
    [
      '[databases]',
      `${opts.database} = host=127.0.0.1 port=5432 dbname=${opts.database} user=postgres`,
      '',
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${userlist}`,
      `pool_mode = ${opts.poolMode ?? 'transaction'}`,
      'max_client_conn = 200',
      `default_pool_size = ${opts.poolSize ?? 10}`,
      // The postgres driver's startup packet holds user, database, client_encoding and
      // application_name, all of which PgBouncer tracks itself; extra_float_digits (sent by
      // node-postgres and JDBC, not by this driver) is the one it would refuse.
      'ignore_startup_parameters = extra_float_digits',
      // A login Postgres refuses (too many clients, while both CI runs are at their busiest) is
      // tried again after a second, not after the default 15 s, which outlasts a check's timeout.
      'server_login_retry = 1',
      `logfile = ${logfile}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );

  // PgBouncer refuses to run as root ("PgBouncer should not run as root") unless told which
  // user to switch to; that user then writes the log and pid files in the directory.
  const args = [ini];
  if (userInfo().uid === 0) {
    const owner = postgresUser();
    for (const path of [dir, ini, userlist]) chownSync(path, owner.uid, owner.gid);
    args.unshift('-u', 'postgres');
  }

  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => {
    running = false;
  });
  // A test process that dies without stop() does not leave the bouncer behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const url = `postgres://postgres@127.0.0.1:${port}/${opts.database}`;
  const stop = async () => {
    process.off('exit', killOnExit);
    if (running) {
      child.kill('SIGTERM'); // "fast exit": closes client and server connections at once
      const killed = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!killed) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const log = () => {
    try {
      return readFileSync(logfile, 'utf8');
    } catch {
      return '';
    }
  };
  // A hang guard: pgbouncer answers within a second, a busy machine may take a good deal longer.
  const deadline = Date.now() + 60_000;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!running) {
      await stop();
      throw new Error(`pgbouncer exited before answering:\n${stderr}${log()}`);
    }
    const probe = postgres(url, { max: 1, prepare: false, connect_timeout: 2, onnotice: () => {} });
    try {
      const [row] = await probe<{ one: number }[]>`select 1 as one`;
      if (row?.one === 1) return { url, port, stop };
    } catch (error) {
      lastError = error;
    } finally {
      await probe.end({ timeout: 1 });
    }
    await sleep(100);
  }
  const detail = `${stderr}${log()}`;
  await stop();
  throw new Error(`pgbouncer on port ${port} did not answer select 1: ${String(lastError)}\n${detail}`);
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid || !gid)
    throw new Error('running as root, pgbouncer needs the user postgres (-u), which is missing');
  return { uid: Number(uid), gid: Number(gid) };
}
