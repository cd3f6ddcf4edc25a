/**
 * Whether attempt `attempt` (1 for the first) is the last of `attempts` (tries in all, the first
 * included): if it fails, no retry follows. The one rule for BullMQ jobs (attemptsMade + 1), the
 * inline runner, the job boundary and webhook deliveries (the schedule's length).
 */
export function isFinalAttempt(attempt: number, attempts: number): boolean {
  return attempt >= attempts;
}
