/** One world of the refresh backtest in a process of its own (bench/refresh.ts runs two at once). */
import { runJob, type WorldJob } from './refresh.ts';

const job = JSON.parse(process.argv[2] ?? '{}') as WorldJob;
process.stdout.write(JSON.stringify(await runJob(job)));
