/** What a unit of work reports back: a job processor's, or a purchase's (src/purchase/protocol.ts). */

/** What a processor reports back; the runtime logs it as the job's one line. */
export interface JobReport {
  outcome: 'succeeded' | 'skipped' | 'deferred' | 'paused';
  entity?: string;
  credits?: number;
  detail?: string;
  counts?: Record<string, number>;
}
