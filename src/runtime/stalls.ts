/**
 * Jobs BullMQ fails for stalling too often: their worker died while running them more than
 * `maxStalledCount` times. An enterprise job's entry fails for the cycle, what its dead holders
 * may have been billed in the ledger; any other job gets a failed run with the reason. A sweep in
 * every worker process finds the entries whose only trace is BullMQ's failed job.
 */
import type { EventEmitter } from 'node:events';
import type { Job } from 'bullmq';
import type { JobDeps, JobReport } from '../../jobs/deps.ts';
import { abandonEnterprise, ENTERPRISE_JOB, EnterpriseJobData } from '../../jobs/enterprise.ts';
import { jobOfHolder } from '../db/lease.ts';
import { finishRun, startRun } from '../landing/runs.ts';
import { lapsedClaims } from '../purchase/fetches.ts';
import { WORKER_DIED } from '../purchase/protocol.ts';
import type { Queues } from './queues.ts';

/**
 * The reason BullMQ (6.x) fails a job that stalled more than `maxStalledCount` times: its stall
 * check marks the job and puts it back to wait, and the next worker to take it fails it with this
 * message without running it (the worker's 'failed' event, with an UnrecoverableError).
 */
export const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

export interface JobEvent {
  kind: string;
  jobId: string;
  outcome: JobReport['outcome'] | 'failed' | 'retrying' | 'rate_limited';
  cycle?: string;
  date?: string;
  entity?: string;
  credits?: number;
  durationMs: number;
  detail?: string;
}

export interface StallWatch {
  /** Settles a job BullMQ failed for stalling (errors logged, never thrown). */
  settle(kind: string, job: Job): void;
  stop(): void;
  /** Resolves once a sweep under way has ended. */
  stopped(): Promise<void>;
}

export function watchStalls(o: {
  deps: JobDeps;
  queues: Queues;
  events: EventEmitter<{ job: [JobEvent] }>;
  maxStalledCount: number;
  lockDuration: number;
}): StallWatch {
  const { deps, queues, events, maxStalledCount, lockDuration } = o;
  /**
   * A job BullMQ failed for stalling too often: its worker died while running it more than
   * `maxStalledCount` times. An enterprise job's entry fails for the cycle (jobs/enterprise.ts
   * `abandonEnterprise`: what its dead holders may have been billed is in the ledger, and it is
   * not bought again); any other job gets a failed run with the reason. Either way it is logged
   * and a job event says why. The sweep (`quiet`) says nothing of an entry settled meanwhile.
   */
  const settleStalled = async (kind: string, job: Job, quiet = false): Promise<void> => {
    const jobId = job.id ?? '?';
    // BullMQ counts the stalls on the job; it fails the job past `maxStalledCount` of them.
    const count = job.stalledCounter > 0 ? job.stalledCounter : maxStalledCount + 1;
    const times = `${count} time${count === 1 ? '' : 's'}`;
    const dataOf = job.data as { cycle?: string; date?: string };
    const base = { kind, jobId, cycle: dataOf.cycle, date: dataOf.date, durationMs: 0 };
    if (kind === ENTERPRISE_JOB) {
      const data = EnterpriseJobData.safeParse(job.data);
      if (data.success) {
        const reason = `its worker died ${times} while buying it (BullMQ failed the job: ${STALLED_TOO_OFTEN}, DAYBOOK_JOB_MAX_STALLS ${maxStalledCount})`;
        const done = await abandonEnterprise(deps, data.data, jobId, reason);
        if (quiet && done.outcome !== 'failed') return;
        if (done.outcome === 'held') {
          // Another holder buys it now; if it dies too, the sweep below finds its lapsed claim.
          deps.log.warn(
            { ...base, detail: done.detail },
            `${kind} failed by BullMQ for stalling; entry held`,
          );
          return;
        }
        const event: JobEvent = { ...base, outcome: 'failed', detail: `${reason}: ${done.detail}` };
        if (done.outcome === 'failed') {
          event.detail = done.detail;
          event.entity = done.entity;
          event.credits = done.credits;
        }
        deps.log.error(
          { ...event, error: WORKER_DIED },
          done.outcome === 'failed'
            ? `${kind} failed for the cycle: its worker died too many times`
            : `${kind} failed by BullMQ for stalling; its entry was settled already`,
        );
        events.emit('job', event);
        return;
      }
    }
    const reason = `its worker died ${times} while running it (BullMQ failed the job: ${STALLED_TOO_OFTEN}, DAYBOOK_JOB_MAX_STALLS ${maxStalledCount}); not run again`;
    const runId = await startRun(deps.sql, {
      kind,
      cycle: dataOf.cycle,
      listDate: dataOf.date,
      entity: jobId,
      jobId,
    });
    await finishRun(deps.sql, runId, { outcome: 'failed', errorCode: WORKER_DIED, errorMessage: reason });
    deps.log.error(
      { ...base, error: WORKER_DIED, detail: reason },
      `${kind} failed: its worker died too many times`,
    );
    events.emit('job', { ...base, outcome: 'failed', detail: reason });
  };
  const reportSettleError = (kind: string, jobId: string | undefined, err: unknown) =>
    deps.log.error(
      { kind, jobId, err: err instanceof Error ? err.message : String(err) },
      kind === ENTERPRISE_JOB
        ? 'could not settle a job BullMQ failed for stalling; once its claim lapses, a sweep does'
        : 'could not record a job BullMQ failed for stalling',
    );

  /**
   * BullMQ's failed job may be the only trace of an entry given up on: the worker that failed it
   * may die before settling the entry. Every worker process looks, now and as often as a lock
   * can lapse, for entries whose claim lapsed unsettled and whose job BullMQ failed so.
   */
  let sweeping: Promise<void> | null = null;
  const sweep = async (): Promise<void> => {
    for (const lapsed of await lapsedClaims(deps.sql)) {
      const jobId = jobOfHolder(lapsed.holder);
      if (jobId === null) continue;
      const job = await queues.enterprise.getJob(jobId);
      if (!job || job.failedReason !== STALLED_TOO_OFTEN || !(await job.isFailed())) continue;
      await settleStalled(ENTERPRISE_JOB, job, true).catch((err) =>
        reportSettleError(ENTERPRISE_JOB, jobId, err),
      );
    }
  };
  const runSweep = () => {
    if (sweeping) return;
    sweeping = sweep()
      .catch((err) =>
        deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'stall sweep failed'),
      )
      .finally(() => {
        sweeping = null;
      });
  };
  runSweep();
  const sweeper = setInterval(runSweep, lockDuration);
  sweeper.unref();

  return {
    settle: (kind, job) => {
      settleStalled(kind, job).catch((e) => reportSettleError(kind, job.id, e));
    },
    stop: () => clearInterval(sweeper),
    stopped: async () => {
      await sweeping;
    },
  };
}
