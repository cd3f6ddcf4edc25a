/** The name this process claims work under (cycle_fetches.holder): host, pid and a random tag. */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

const PROCESS = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/** The holder of one job's claim: this process, and the job. */
export function holderOf(jobId: string): string {
  return `${PROCESS}/${jobId}`.slice(0, 200);
}
