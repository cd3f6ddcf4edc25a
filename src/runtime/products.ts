/**
 * The product commands' work, run in the command's process with the queue's retry semantics
 * (inline.ts `withRetries`): a date's trending list, as a scheduled pull is (jobs/products.ts),
 * and one product's detail (jobs/product-detail.ts). The commands (src/cli/products-*.ts) ask for
 * these and show the result; they never call a job themselves.
 */
import { type DetailSeen, processProductDetail } from '../../jobs/product-detail.ts';
import { ProductsJobData, processProducts } from '../../jobs/products.ts';
import { realSleep, withRetries } from './inline.ts';
import { ENQUEUES_NOTHING, type JobProcess, jobDepsOf } from './process.ts';

export type { DetailSeen } from '../../jobs/product-detail.ts';

/** What a product command's pull came to: the job's report, or why it failed for good. */
export type PullReport = Awaited<ReturnType<typeof withRetries>>;

/** What a command asks of a list: its date, the pull it is (`backfill` by hand), its length. */
export interface ListPull {
  date: string;
  limit?: number;
  /** `backfill` (the default) for a pull by hand. */
  pull?: string;
}

/**
 * Pulls the trending list of `list.date` and applies it; `onApplied` is told the raw response
 * landed. `names` names the pull: its run's job id, and its label in the log.
 */
export function pullProductList(
  proc: JobProcess,
  list: ListPull,
  names: { jobId: string; label: string },
  onApplied?: (rawResponseId: number) => void,
): Promise<PullReport> {
  const deps = jobDepsOf(proc, ENQUEUES_NOTHING);
  const data = ProductsJobData.parse({
    date: list.date,
    pull: list.pull ?? 'backfill',
    limit: list.limit ?? deps.config.DAYBOOK_PRODUCT_LIMIT,
  });
  return withRetries(
    deps,
    'product-listing',
    names.label,
    (last) => processProducts(deps, data, names.jobId, last, onApplied),
    realSleep,
  );
}

/** Asks for the detail of product `name` and applies it; `seen` is told what it said. */
export function pullProductDetail(
  proc: JobProcess,
  name: string,
  seen: (detail: DetailSeen) => void,
): Promise<PullReport> {
  const deps = jobDepsOf(proc, ENQUEUES_NOTHING);
  return withRetries(
    deps,
    'product-listing',
    `product ${name}`,
    () => processProductDetail(deps, name, seen),
    realSleep,
  );
}
