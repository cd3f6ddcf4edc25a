/**
 * The states of one entry's buy in one cycle, and the moves between them, written once: the
 * table below. Everything else follows from it. The status a write stores in `cycle_fetches` is
 * the status of the state the table moves the entry to; the statuses a buyer may claim from and
 * the settled ones are read off it; a claim knows the state it stands in, and a step the table
 * does not allow from there throws before it writes anything. The diagram of
 * docs/architecture.md is drawn from it (`npm run docs:states` redraws it).
 *
 * Most states are a status of the row. The steps of a holder between its claim and the end of
 * the buy all keep the row `fetching` (what tells them apart is in other columns and the ledger):
 * they are states here all the same, for a claim walks through them in order. `lapsed` is a
 * `fetching` row nobody holds any more: its holder let it go, died or starved, or it is the
 * claim of this job's earlier attempt. `unplanned` is no row at all.
 */

/** The statuses of a `cycle_fetches` row (its CHECK constraint holds the same set). */
export const FETCH_STATUSES = [
  'planned',
  'deferred',
  'skipped',
  'fetching',
  'retrying',
  'succeeded',
  'duplicate',
  'failed',
] as const;
export type FetchStatus = (typeof FETCH_STATUSES)[number];

/** The moves of a buy: from a state, by a step, to a state. A step names one move from a state. */
export const TRANSITIONS = [
  // The plan (src/plan, through recordPlan and replanDeferred).
  { from: 'unplanned', step: 'plan', to: 'planned' },
  { from: 'unplanned', step: 'skip', to: 'skipped' },
  { from: 'planned', step: 'skip', to: 'skipped' },
  { from: 'deferred', step: 'skip', to: 'skipped' },
  { from: 'planned', step: 'defer', to: 'deferred' },
  { from: 'deferred', step: 'plan', to: 'planned' },
  { from: 'skipped', step: 'plan', to: 'planned' },
  { from: 'deferred', step: 'resume', to: 'planned' },
  // The claim (claimFetch): planned, left to retry, or taken over.
  { from: 'planned', step: 'claim', to: 'claimed' },
  { from: 'retrying', step: 'claim', to: 'claimed' },
  { from: 'lapsed', step: 'claim', to: 'claimed' },
  // A claimed entry, up to the call (buyEntry, abandonEntry).
  { from: 'claimed', step: 'remove', to: 'skipped' },
  { from: 'claimed', step: 'recover', to: 'booked' },
  { from: 'claimed', step: 'presume', to: 'claimed' },
  { from: 'claimed', step: 'unanswered', to: 'failed' },
  { from: 'claimed', step: 'reserve', to: 'reserved' },
  { from: 'claimed', step: 'defer', to: 'deferred' },
  { from: 'claimed', step: 'abandon', to: 'failed' },
  { from: 'reserved', step: 'call', to: 'calling' },
  // The answer: landed as received, then booked (a success) or settled (a failure).
  { from: 'calling', step: 'land', to: 'landed' },
  { from: 'landed', step: 'book', to: 'booked' },
  { from: 'landed', step: 'retry', to: 'retrying' },
  { from: 'landed', step: 'fail', to: 'failed' },
  { from: 'landed', step: 'unanswered', to: 'failed' },
  { from: 'landed', step: 'pause', to: 'deferred' },
  // A booked answer, handed to history (the job), then completed, refused or found unusable.
  { from: 'booked', step: 'apply', to: 'applied' },
  { from: 'booked', step: 'refuse', to: 'failed' },
  { from: 'booked', step: 'unusable', to: 'failed' },
  { from: 'applied', step: 'complete', to: 'succeeded' },
  { from: 'applied', step: 'duplicate', to: 'duplicate' },
  // A holder whose work threw lets its claim go (holdingLease); one that dies leaves it to lapse.
  { from: 'claimed', step: 'let go', to: 'lapsed' },
  { from: 'reserved', step: 'let go', to: 'lapsed' },
  { from: 'calling', step: 'let go', to: 'lapsed' },
  { from: 'landed', step: 'let go', to: 'lapsed' },
  { from: 'booked', step: 'let go', to: 'lapsed' },
  { from: 'applied', step: 'let go', to: 'lapsed' },
] as const satisfies readonly { from: string; step: string; to: string }[];

/** One move of the table. */
export type Transition = (typeof TRANSITIONS)[number];
/** A state of the buy: any state the table names. */
export type BuyState = Transition['from'] | Transition['to'];
/** A step of the buy. */
export type BuyStep = Transition['step'];
/** The steps the table allows from `F`. */
export type StepFrom<F extends BuyState> = Extract<Transition, { from: F }>['step'];
/** Where step `S` takes a buy from `F`. */
export type StateAfter<F extends BuyState, S extends BuyStep> = Extract<
  Transition,
  { from: F; step: S }
>['to'];

/** The status `cycle_fetches` stores for each state (`unplanned`: no row). */
export const STORED_STATUS = {
  unplanned: null,
  planned: 'planned',
  deferred: 'deferred',
  skipped: 'skipped',
  retrying: 'retrying',
  lapsed: 'fetching',
  claimed: 'fetching',
  reserved: 'fetching',
  calling: 'fetching',
  landed: 'fetching',
  booked: 'fetching',
  applied: 'fetching',
  succeeded: 'succeeded',
  duplicate: 'duplicate',
  failed: 'failed',
} as const satisfies Record<BuyState, FetchStatus | null>;

/** Every state, in the order the table first names it. */
export const BUY_STATES: readonly BuyState[] = [...new Set(TRANSITIONS.flatMap((t) => [t.from, t.to]))];

/**
 * Where `step` takes a buy from `from`; throws when the table has no such move (a step taken out
 * of order: a bug, caught before it writes).
 */
export function nextState(from: BuyState, step: BuyStep): BuyState {
  const move = TRANSITIONS.find((t) => t.from === from && t.step === step);
  if (!move) throw new Error(`the purchase protocol has no step "${step}" from "${from}"`);
  return move.to;
}

/** `nextState` for a move the caller names: one the table does not have does not compile. */
export function transition<F extends BuyState, S extends StepFrom<F>>(from: F, step: S): StateAfter<F, S> {
  return nextState(from, step) as StateAfter<F, S>;
}

/** The status a row in `state` is stored with. */
export function statusOf<S extends BuyState>(state: S): (typeof STORED_STATUS)[S] {
  return STORED_STATUS[state];
}

/** The status a write stores for `step` from `from` (a move the table has, else it throws). */
export function statusAfter(from: BuyState, step: BuyStep): FetchStatus {
  const status = STORED_STATUS[nextState(from, step)];
  if (status === null) throw new Error(`the step "${step}" from "${from}" leaves no row`);
  return status;
}

/** The states `step` moves from. */
export function statesBefore(step: BuyStep): BuyState[] {
  return TRANSITIONS.filter((t) => t.step === step).map((t) => t.from);
}

/** Settled for the cycle: the stored statuses of the states no step leaves. */
export const SETTLED: readonly FetchStatus[] = BUY_STATES.filter(
  (s) => !TRANSITIONS.some((t) => t.from === s),
).flatMap((s) => STORED_STATUS[s] ?? []);

/** What carries a buy's state: a claim (src/purchase/fetches.ts). */
export interface Walking {
  state: BuyState;
}

/** A move a claim made. */
export interface Move {
  from: BuyState;
  step: BuyStep;
  to: BuyState;
}

const watchers = new Set<(m: Move) => void>();

/** Calls `fn` with every move a claim makes from now on (the transition test); returns the stop. */
export function watchMoves(fn: (m: Move) => void): () => void {
  watchers.add(fn);
  return () => watchers.delete(fn);
}

/** Moves `claim` by `step` (once its write is done); throws when the table has no such move. */
export function enter(claim: Walking, step: BuyStep): BuyState {
  const from = claim.state;
  const to = nextState(from, step);
  claim.state = to;
  for (const fn of watchers) fn({ from, step, to });
  return to;
}

/** The id of a state in the diagram: Mermaid's start for `unplanned`. */
const node = (s: BuyState): string => (s === 'unplanned' ? '[*]' : s);

/**
 * The table drawn as a Mermaid state diagram, one line a move; a state stored under another
 * status than its name says which.
 */
export function stateDiagram(): string {
  const lines = ['stateDiagram-v2'];
  for (const s of BUY_STATES) {
    const status = STORED_STATUS[s];
    if (status !== null && status !== s) lines.push(`  ${s}: stored as ${status}`);
  }
  for (const t of TRANSITIONS) lines.push(`  ${node(t.from)} --> ${node(t.to)}: ${t.step}`);
  return lines.join('\n');
}
