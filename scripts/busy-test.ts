/**
 * `npm run test:busy [-- vitest arguments]`: the test suite on a busy machine. One busy-looping
 * Node process per core (os.availableParallelism(), at normal priority) runs for as long as
 * `npm test` does, so a test that waits for a time instead of a state, or holds a CPU-bound
 * property to a tight timeout, fails here before it fails in CI on a loaded machine.
 *
 *     npm run test:busy                                  # the whole suite
 *     npm run test:busy -- test/pipeline/cycle.test.ts   # some files (any vitest arguments)
 *
 * The hogs are killed when the suite ends, on SIGINT/SIGTERM/SIGHUP, and on any exit of this
 * process; each hog also exits by itself once this process is gone (even after a SIGKILL). The
 * script ends with the vitest summary and exits with vitest's code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * A hog: a plain `for (;;)` loop that looks up from its spinning every ~50 ms of work to see
 * whether its parent (this script) is still there, and exits when it is not.
 */
const HOG = `const parent = process.ppid;
for (;;) {
  for (let i = 0; i < 5e7; i++);
  if (process.ppid !== parent) process.exit(0);
}`;

const cores = availableParallelism();
const hogs: ChildProcess[] = [];
for (let i = 0; i < cores; i++)
  hogs.push(spawn(process.execPath, ['-e', HOG], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } }));

const killHogs = () => {
  for (const h of hogs) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
};
process.on('exit', killHogs);

const args = process.argv.slice(2);
console.log(
  `test:busy: ${cores} busy-looping processes (one per core, pids ${hogs.map((h) => h.pid).join(', ')}) while npm test${args.length ? ` -- ${args.join(' ')}` : ''} runs`,
);
const started = Date.now();
const suite = spawn('npm', ['test', '--', ...args], { stdio: ['inherit', 'pipe', 'inherit'] });

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => {
    killHogs();
    if (suite.exitCode === null && suite.signalCode === null) suite.kill(signal);
    // A second signal, or a suite that does not stop: leave at once (the 'exit' handler runs).
    setTimeout(() => process.exit(130), 10_000).unref();
    process.once(signal, () => process.exit(130));
  });

/** vitest's output as it comes, and the summary lines kept for the end. */
let tail = '';
suite.stdout?.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-20_000);
});

suite.on('exit', (code, signal) => {
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
