/**
 * The failures a job processor names, so that the one boundary in the runtime can turn each into
 * what happens next (wait, retry, give up) without knowing the processor.
 */

import { namedError } from './named-error.ts';

/** Another holder's lease on the entry is live: this attempt buys nothing and looks again later. */
export class ClaimHeldError extends namedError('ClaimHeldError') {
  readonly until: Date;
  constructor(message: string, until: Date) {
    super(message);
    this.until = until;
  }
}

/** This attempt's claim lapsed and was taken over before its call: it bought nothing. */
export class LostClaimError extends namedError('LostClaimError') {}

/** The entry failed for good in this cycle (its answer was billed and cannot be used): no retry. */
export class FinalForCycleError extends namedError('FinalForCycleError') {}

export class BadJobDataError extends namedError('BadJobDataError') {}
