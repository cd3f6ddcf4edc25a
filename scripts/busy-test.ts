/**
 * `npm run test:busy [-- vitest arguments]`: the test suite on a busy machine. One busy-looping
 * Node process per core (os.availableParallelism(), at normal priority) runs for as long as
 * `npm test` does, so a test that waits for a time instead of a state, or holds a CPU-bound
 * property to a tight timeout, fails here before it fails in CI on a loaded machine.
 *
 *     npm run test:busy                                  # the whole suite
 *     npm run test:busy -- test/pipeline/cycle.test.ts   # some files (any vitest arguments)
 *
 * The hogs are killed when the suite ends, on SIGINT/SIGTERM/SIGHUP (passed on to npm and vitest,
 * a second one kills them), and on any exit of this process; each hog also exits by itself once
 * this process is gone (even after a SIGKILL). The script ends with the vitest summary and exits
 * with vitest's code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * A hog: a plain `for (;;)` loop that looks up from its spinning every ~10 ms of work to see
 * whether its parent (this script) is still there (signal 0: Node's process.ppid is read once),
 * and exits when it is not.
 */
const HOG = `const parent = ${process.pid};
for (;;) {
  for (let i = 0; i < 1e7; i++);
  try { process.kill(parent, 0); } catch { process.exit(0); }
}`;

const cores = availableParallelism();
const hogs: ChildProcess[] = [];
for (let i = 0; i < cores; i++)
  hogs.push(spawn(process.execPath, ['-e', HOG], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } }));

const killHogs = () => {
  for (const h of hogs) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
};

const args = process.argv.slice(2);
console.log(
  `test:busy: ${cores} busy-looping processes (one per core, pids ${hogs.map((h) => h.pid).join(', ')}) while npm test${args.length ? ` -- ${args.join(' ')}` : ''} runs`,
);
const started = Date.now();
// npm and vitest in a process group of their own, so a signal reaches vitest and its workers,
// not only npm; the summary is printed once vitest has closed its output ('close', not 'exit').
const suite = spawn('npm', ['test', '--', ...args], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
let ended = false;
const signalSuite = (signal: NodeJS.Signals) => {
  if (ended || suite.pid === undefined) return;
  try {
    process.kill(-suite.pid, signal);
  } catch {
    // Already gone.
  }
};
process.on('exit', () => {
  killHogs();
  signalSuite('SIGTERM');
});

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => {
    killHogs();
    if (interrupted) {
      // A second signal: stop the suite at once.
      signalSuite('SIGKILL');
      process.exit(130);
    }
    interrupted = true;
    signalSuite(signal);
  });

/** vitest's output as it comes, and the summary lines kept for the end. */
let tail = '';
suite.stdout?.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-20_000);
});

suite.on('close', (code, signal) => {
  ended = true;
  killHogs();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes.
  const plain = tail.replace(/\u001b\[[0-9;]*m/g, '');
  const summary = plain
    .split('\n')
    .filter((l) => /^\s*(Test Files|Tests|Errors|Duration)\s/.test(l))
    .map((l) => l.trim());
  const status = code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGKILL' ? 9 : 15) : 1);
  console.log(
    [
      '',
      `test:busy: ${cores} hogs, ${Math.round((Date.now() - started) / 1000)} s, vitest exited with ${signal ?? code}`,
      ...(summary.length ? summary : ['(no vitest summary: the run did not finish)']),
    ].join('\n'),
  );
  process.exit(status);
});
