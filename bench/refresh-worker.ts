/**
 * One world of the refresh backtest in a process of its own (bench/refresh.ts runs two at once).
 * It prints its figures as JSON, or `{"error": …}` when the world or the run failed: the message
 * and where it was thrown, for the parent to report without a stack trace.
 */
import { runJob, type WorldJob } from './refresh.ts';

const job = JSON.parse(process.argv[2] ?? '{}') as WorldJob;
try {
  process.stdout.write(JSON.stringify(await runJob(job)));
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  // The first frame names the line that threw: a world module's own, where the mistake is.
  const at = err instanceof Error ? /\n\s+at (.+)/.exec(err.stack ?? '')?.[1] : undefined;
  process.stdout.write(JSON.stringify({ error: at === undefined ? message : `${message} (at ${at})` }));
  process.exitCode = 1;
}
