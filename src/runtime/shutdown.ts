import { within } from '../time/deadline.ts';
/** One shutdown path for SIGTERM, SIGINT and tests: resources close in reverse order of opening. */

export class Closer {
  private readonly stack: { name: string; close: () => Promise<void> | void }[] = [];

  /** Registers a resource; the last registered closes first. */
  add(name: string, close: () => Promise<void> | void): void {
    this.stack.push({ name, close });
  }

  /** Closes everything, each within `timeoutMs`; errors are reported, not thrown. */
  async closeAll(timeoutMs = 30_000, onError?: (name: string, err: unknown) => void): Promise<void> {
    while (this.stack.length > 0) {
      const { name, close } = this.stack.pop() as { name: string; close: () => Promise<void> | void };
      try {
        await within(Promise.resolve().then(close), timeoutMs, `${name} closing`);
      } catch (err) {
        onError?.(name, err);
      }
    }
  }
}

/** The first SIGTERM or SIGINT, as an abort signal and a promise; a second one ends the process. */
export interface StopRequest {
  /** Aborted on the first signal: waits for a dependency end at once. */
  signal: AbortSignal;
  /** Resolves with the first signal's name. */
  requested: Promise<NodeJS.Signals>;
}

/** Listens for SIGTERM and SIGINT from now on (so a stop during start-up is seen too). */
export function listenForStop(onSecond: (signal: NodeJS.Signals) => void): StopRequest {
  const controller = new AbortController();
  let resolve: (s: NodeJS.Signals) => void = () => {};
  const requested = new Promise<NodeJS.Signals>((r) => {
    resolve = r;
  });
  const on = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) return onSecond(signal);
    controller.abort();
    resolve(signal);
  };
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
  return { signal: controller.signal, requested };
}

export interface BoundedStop {
  /** The process, for the log lines ("worker", "scheduler", "admin server"). */
  what: string;
  closer: Closer;
  /** The whole stop, closing included; past it the process exits with code 1. */
  timeoutMs: number;
  /** Each resource's share when a dependency is already down (nothing to wait for). */
  degradedMs?: number;
  /** Whether a dependency is down now. */
  degraded?: () => boolean;
  log: { info: (o: object, m: string) => void; error: (o: object, m: string) => void; flush?: () => void };
}

/**
 * Closes everything in reverse order and ends the process, within `timeoutMs` whatever is
 * down: a Redis or Postgres that does not answer can hold a close, and a reconnecting client
 * keeps Node alive, so the process exits explicitly (code 0, or 1 past the deadline).
 */
export async function stopWithin(stop: BoundedStop, signal: string): Promise<never> {
  const { log } = stop;
  const started = Date.now();
  const deadline = setTimeout(() => {
    log.error(
      { timeoutMs: stop.timeoutMs },
      `${stop.what} did not stop within ${stop.timeoutMs} ms: exiting with work in flight (claims lapse and are taken over)`,
    );
    log.flush?.();
    process.exit(1);
  }, stop.timeoutMs);
  const degraded = stop.degraded?.() ?? false;
  log.info(
    { signal, degraded },
    `${stop.what} stopping${degraded ? ' (a dependency is down: not waiting for it)' : ''}`,
  );
  const each = degraded ? (stop.degradedMs ?? 3000) : stop.timeoutMs;
  await stop.closer.closeAll(each, (name, err) =>
    log.error({ name, err: err instanceof Error ? err.message : String(err) }, 'close failed'),
  );
  clearTimeout(deadline);
  log.info({ ms: Date.now() - started }, `${stop.what} stopped`);
  log.flush?.();
  process.exit(0);
}

/** A long-running command's life: its resources, and one bounded stop on SIGTERM or SIGINT. */
export interface Lifecycle {
  closer: Closer;
  /** Aborted when a stop is asked for; waits for a dependency watch it. */
  signal: AbortSignal;
  /**
   * Runs a start-up step. When a stop was asked for meanwhile, its failure (a wait cut short) is
   * the stop's doing: it never settles, and the stop under way ends the process.
   */
  starting<T>(step: () => Promise<T>): Promise<T>;
  /** Started: waits for the stop, then stops within the bound and ends the process. */
  serve(): Promise<never>;
}

/**
 * Listens for SIGTERM and SIGINT from the start: a stop asked for while the command is still
 * starting (waiting for a dependency that is down, say) closes what is open at once. A second
 * signal ends the process with code 1.
 */
export function lifecycle(options: Omit<BoundedStop, 'closer'>): Lifecycle {
  const closer = new Closer();
  let started = false;
  let stopping = false;
  const stop = listenForStop((signal) => {
    options.log.error({ signal }, `${options.what}: second ${signal}, exiting now`);
    options.log.flush?.();
    process.exit(1);
  });
  const run = (signal: string): Promise<never> => {
    if (stopping) return new Promise<never>(() => {});
    stopping = true;
    return stopWithin({ ...options, closer }, signal);
  };
  void stop.requested.then((signal) => {
    if (!started) void run(signal);
  });
  return {
    closer,
    signal: stop.signal,
    starting: async (step) => {
      try {
        return await step();
      } catch (err) {
        if (stop.signal.aborted) return new Promise<never>(() => {});
        throw err;
      }
    },
    serve: async () => {
      started = true;
      return run(await stop.requested);
    },
  };
}
