/**
 * Real processes for the crash and restart tests: `daybook worker` children started and killed
 * by pid, and a private redis-server on a port of its own. Nothing here touches the shared
 * Postgres server or the shared Redis beyond the test's own database and prefix.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../../support/cli.ts';
import { freePort } from '../../support/net.ts';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  readonly pid: number;
  /** Every stderr line (JSON log lines) so far. */
  readonly lines: string[];
  /** Resolves when the worker logged "worker started"; rejects if it exits first. */
  readonly started: Promise<void>;
  readonly exited: Promise<Exit>;
  /** How it exited, or null while it runs. */
  readonly exit: Exit | null;
  /** Sends `signal` to this process only, and waits for it to exit. */
  stop(signal: NodeJS.Signals): Promise<Exit>;
}

/** A `daybook worker` child with only PATH, HOME, CI and `env` in its environment. */
export function spawnWorker(env: Record<string, string>, args: string[] = []): WorkerProcess {
  return spawnDaybook('worker', env, args, '"msg":"worker started"');
}

/**
 * A long-running `daybook <command>` child (worker, scheduler, serve) with only PATH, HOME, CI
 * and `env` in its environment; `started` resolves on the first stderr line holding `ready`.
 */
export function spawnDaybook(
  command: string,
  env: Record<string, string>,
  args: string[],
  ready: string,
): WorkerProcess {
  const child: ChildProcess = spawn(process.execPath, [BIN, command, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: 'true', ...env },
    cwd: mkdtempSync(join(tmpdir(), 'daybook-worker-')),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let onStarted: () => void = () => {};
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (line.includes(ready)) onStarted();
    }
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const started = new Promise<void>((resolve, reject) => {
    onStarted = resolve;
    void exited.then((e) =>
      reject(
        new Error(
          `${command} exited (${e.signal ?? e.code}) before it started:\n${lines.slice(-5).join('\n')}`,
        ),
      ),
    );
  });
  started.catch(() => {});
  return {
    pid: child.pid ?? -1,
    lines,
    started,
    exited,
    get exit() {
      return child.exitCode === null && child.signalCode === null
        ? null
        : { code: child.exitCode, signal: child.signalCode };
    },
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** SIGTERM: Redis shuts down cleanly (with appendonly, the AOF is fsynced first). */
  stop(): Promise<Exit>;
}

/** Starts redis-server on `port` (a free one by default), persisting in `dir` when `appendonly`. */
export async function startRedis(options: {
  appendonly: boolean;
  dir?: string;
  port?: number;
  /** More redis-server arguments (a cluster node's, for one). */
  args?: string[];
}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'daybook-redis-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      options.appendonly ? 'yes' : 'no',
      '--dir',
      dir,
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    // A hang guard: redis-server is ready within a second, later on a busy machine.
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 60_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${e.signal ?? e.code}):\n${output}`));
    });
  });
  child.stdout.resume();
  child.stderr.resume();
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface RedisCluster {
  nodes: RedisServer[];
  /** The value of REDIS_CLUSTER_NODES: every master, host:port, comma-separated. */
  seeds: string;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster of `masters` masters (no replicas) from Debian's redis-server, on free loopback
 * ports, each in a directory of its own: started, joined with `redis-cli --cluster create`, and
 * returned once every node says `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  const stop = async () => {
    for (const n of nodes.splice(0)) {
      await n.stop();
      rmSync(n.dir, { recursive: true, force: true });
    }
  };
  try {
    for (let i = 0; i < masters; i++)
      nodes.push(
        await startRedis({
          appendonly: false,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '5000',
          ],
        }),
      );
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0)
      throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);
    await waitFor(
      'the cluster to agree',
      async () =>
        nodes.every((n) => {
          const r = spawnSync('redis-cli', ['-p', String(n.port), 'cluster', 'info'], { encoding: 'utf8' });
          return r.stdout.includes('cluster_state:ok') && r.stdout.includes(`cluster_known_nodes:${masters}`);
        }),
      30_000,
      250,
    );
    return { nodes, seeds: addresses.join(','), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resolves when `done()` is true, checking every `intervalMs`; rejects after `timeoutMs`. */
export async function waitFor(
  what: string,
  done: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not done within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
