/**
 * How much garbage a long-running worker lets pile up. V8 lets the old generation grow to up to
 * four times what was live after the last full collection before it collects again, when the
 * machine has memory to spare (V8's heap growing factor). A worker's live heap is about 30 MiB;
 * its jobs leave short-lived objects behind (postgres.js queries, fetch internals) that outlive
 * a young-generation collection, so its old generation swelled to 90–130 MiB of mostly garbage,
 * and the process to 230–255 MiB (bench/memory.ts). Capping the factor at 1.5 keeps it near
 * 40 MiB for a few more full collections, each a few ms on a heap this small.
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation may grow this much (%) past the live heap before V8 collects it. */
export const WORKER_HEAP_GROWING_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/**
 * Applies WORKER_HEAP_GROWING_PERCENT to this process, unless the operator set the flag
 * (`node --heap-growing-percent=N` or NODE_OPTIONS): theirs wins. V8 reads it whenever it
 * recomputes the heap limit, so setting it at run time takes effect (unlike the heap size flags).
 * Returns the percent in force, or null when the operator's flag is.
 */
export function limitHeapGrowth(
  percent = WORKER_HEAP_GROWING_PERCENT,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): number | null {
  // V8 takes --heap_growing_percent as well.
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) =>
    a.replaceAll('_', '-').startsWith(FLAG),
  );
  if (given) return null;
  setFlagsFromString(`${FLAG}=${percent}`);
  return percent;
}
