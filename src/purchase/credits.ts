/**
 * The credit budget of a cycle, kept in Postgres so workers on any number of machines share it.
 * A call reserves its credits before it is sent (one atomic UPDATE that succeeds only while
 * spent + reserved + cost ≤ budget and the cycle is not paused), then settles with what was
 * actually billed, or releases the reservation when nothing was.
 */
import { inTransaction, type Sql } from '../db/connect.ts';
import type { DriverRow, Recast } from '../db/rows.ts';
import type { cycleBudgets } from '../db/schema.ts';
import { appendEvents } from '../events/outbox.ts';

export type ReserveOutcome =
  | { ok: true }
  | { ok: false; reason: 'budget_exhausted' | 'paused'; detail: string };

/** Creates the cycle's budget row when missing (the budget of an existing row is kept). */
export async function ensureCycleBudget(sql: Sql, cycle: string, budget: number): Promise<void> {
  await sql`insert into cycle_budgets (cycle, budget) values (${cycle}, ${budget}) on conflict (cycle) do nothing`;
}

/** Reserves `credits` against the cycle's budget, atomically. */
export async function reserveCredits(sql: Sql, cycle: string, credits: number): Promise<ReserveOutcome> {
  const rows = await sql`
    update cycle_budgets set reserved = reserved + ${credits}
    where cycle = ${cycle} and paused_at is null and spent + reserved + ${credits} <= budget
    returning cycle`;
  if (rows.length > 0) return { ok: true };
  const [b] = await sql<
    Pick<DriverRow<typeof cycleBudgets>, 'budget' | 'reserved' | 'spent' | 'paused_reason' | 'paused_at'>[]
  >`
    select budget, reserved, spent, paused_reason, paused_at from cycle_budgets where cycle = ${cycle}`;
  if (!b) return { ok: false, reason: 'budget_exhausted', detail: `no budget row for cycle ${cycle}` };
  if (b.paused_at) return { ok: false, reason: 'paused', detail: b.paused_reason ?? 'paused' };
  return {
    ok: false,
    reason: 'budget_exhausted',
    detail: `cycle ${cycle} budget ${b.budget}: ${b.spent} spent, ${b.reserved} reserved, ${credits} more needed`,
  };
}

/**
 * Settles a reservation with what the upstream billed (0 releases it). `billed` may be negative:
 * a call presumed spent whose answer showed it cost less.
 */
export async function settleCredits(
  sql: Sql,
  cycle: string,
  reserved: number,
  billed: number,
): Promise<void> {
  await sql`
    update cycle_budgets set reserved = greatest(0, reserved - ${reserved}), spent = spent + ${billed}
    where cycle = ${cycle}`;
}

/** Pauses enterprise work of the cycle (insufficient credits, a refusing upstream). */
export async function pauseCycle(
  sql: Sql,
  cycle: string,
  reason: string,
  cause: 'credits' | 'retry_after' | 'refusing' = 'credits',
): Promise<void> {
  await inTransaction(sql, async (tx) => {
    // The event is written once per pause: by whoever moved the cycle from running to paused.
    const [was] = await tx<Pick<DriverRow<typeof cycleBudgets>, 'paused_at'>[]>`
      select paused_at from cycle_budgets where cycle = ${cycle} for update`;
    await tx`update cycle_budgets set paused_at = coalesce(paused_at, now()), paused_reason = ${reason} where cycle = ${cycle}`;
    if (!was || was.paused_at !== null) return;
    await appendEvents(tx, [
      {
        type: cause === 'refusing' ? 'upstream.refusing' : 'cycle.paused',
        severity: 'high',
        pid: null,
        cycle,
        detectedAt: new Date(),
        rawResponseId: null,
        data: { cycle, counts: {}, credits: null, reason },
      },
    ]);
  });
}

/** Clears a pause; returns whether the cycle was paused. */
export async function resumeCycle(sql: Sql, cycle: string, addBudget = 0): Promise<boolean> {
  const rows = await sql`
    update cycle_budgets set paused_at = null, paused_reason = null, budget = budget + ${addBudget}
    where cycle = ${cycle} returning (paused_at is null) as was`;
  return rows.length > 0;
}

export interface BudgetState {
  cycle: string;
  budget: number;
  reserved: number;
  spent: number;
  pausedAt: Date | null;
  pausedReason: string | null;
}

export async function budgetOf(sql: Sql, cycle: string): Promise<BudgetState | null> {
  const [b] = await sql<
    Recast<DriverRow<typeof cycleBudgets>, 'cycle', string>[]
  >`select cycle::text, budget, reserved, spent, paused_at, paused_reason from cycle_budgets where cycle = ${cycle}`;
  return b
    ? {
        cycle: b.cycle,
        budget: b.budget,
        reserved: b.reserved,
        spent: b.spent,
        pausedAt: b.paused_at,
        pausedReason: b.paused_reason,
      }
    : null;
}

/**
 * The credits of a cycle as the ledger knows them. Confirmed: booked, the upstream answered and
 * billed. Unconfirmed: calls sent and not answered (`unconfirmed`) or cut off by a process that
 * died (`presumed`): they may have been billed, and count as spent. Unpriced: product calls booked
 * without an amount (credits null), counted, never summed.
 */
export interface LedgerCredits {
  confirmed: number;
  /** unconfirmed + presumed credits. */
  unconfirmed: number;
  /** Of `unconfirmed`, the credits presumed for calls a dead process left unsettled. */
  presumed: number;
  /** Calls behind `unconfirmed`. */
  unconfirmedCalls: number;
  unpricedCalls: number;
}

/**
 * The ledger's credits of `cycle` (a null amount never breaks a sum), from the entries alone: a
 * running cycle's by the cycle index of `ledger_entries`, a compacted one's (`ledger_compacted`,
 * all booked) by its block range index; only an unpriced call's operation is read from its words.
 */
export async function ledgerCredits(sql: Sql, cycle: string): Promise<LedgerCredits> {
  const [r] = await sql<LedgerCredits[]>`
    select coalesce(sum(credits) filter (where status = 'booked'), 0)::int as confirmed,
           coalesce(sum(credits) filter (where status in ('unconfirmed', 'presumed')), 0)::int as unconfirmed,
           coalesce(sum(credits) filter (where status = 'presumed'), 0)::int as presumed,
           (count(*) filter (where status in ('unconfirmed', 'presumed')))::int as "unconfirmedCalls",
           (select count(*) from credit_ledger u
            where u.cycle = ${cycle} and u.credits is null and u.operation = 'product-listing')::int as "unpricedCalls"
    from (select credits, status from ledger_entries where cycle = ${cycle}
          union all
          select credits, 'booked' from ledger_compacted where cycle = ${cycle}) l`;
  return r ?? { confirmed: 0, unconfirmed: 0, presumed: 0, unconfirmedCalls: 0, unpricedCalls: 0 };
}

/** The budget row of the latest cycle (the newest, made by its plan), as the metrics read it. */
export type LatestBudget = Recast<
  Pick<DriverRow<typeof cycleBudgets>, 'cycle' | 'budget' | 'reserved' | 'spent' | 'paused_reason'>,
  'cycle',
  string
> & {
  /** Whether `paused_at` is set. */
  paused: boolean;
};

/** The latest cycle's budget, or null before the first plan. */
export async function latestBudget(sql: Sql): Promise<LatestBudget | null> {
  const [b] = await sql<LatestBudget[]>`
    select cycle::text as cycle, budget, reserved, spent, paused_at is not null as paused, paused_reason
    from cycle_budgets order by cycle desc limit 1`;
  return b ?? null;
}

/** The sum of the ledger's credits: a computed shape of `credit_ledger`. */
interface CreditSum {
  credits: number;
}

/** Every credit the ledger holds, in all cycles (a null amount never breaks a sum). */
export async function creditsBilled(sql: Sql): Promise<number> {
  const [r] = await sql<CreditSum[]>`select coalesce(sum(credits), 0)::int as credits from credit_ledger`;
  return r?.credits ?? 0;
}
