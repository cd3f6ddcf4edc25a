/**
 * What the refresh backtest (bench/refresh.ts) runs against: a world of watched firms that change
 * day by day. A world module (`npm run bench -- refresh --world <module>`) exports
 *
 *   export const family: string;          // a short name for the table
 *   export const about: string;           // one line: what kind of world it is
 *   export function createWorld(opts: WorldOptions): RefreshWorld;
 *
 * and a `RefreshWorld` gives, day after day (1, 2, … in order, never back): which firms the
 * day's registry refresh changed (with the fields and the severity), each firm's registry record
 * as the upstream answers it that day (ENTSTATUS, APPRDATE, ESDATE, ENTTYPECODE, INDUSTRYPHY,
 * REGCAP are what the planner reads), each firm's true change rate that day for the oracle
 * policy, and (optionally) the day each firm joins the watchlist.
 *
 * **The rate.** `trueRate` is a rate, not a probability: λ, the expected number of changes per
 * day of a Poisson process, which is what the planner estimates (`watchlist.change_rate`). The
 * chance that a day brings at least one change is 1 − e^(−λ) (about λ while λ is small: 0.02 a
 * day is a 1.98% daily chance); a world that thinks in daily probabilities p gives −ln(1 − p).
 * The changes `advance(d)` returns are drawn at the rates `trueRate` answers after it: the oracle
 * is told each day's rates, on the day.
 *
 * **Joining later.** A world whose watchlist grows gives `joinsOn(firm)`: the first day (1 …
 * days) the firm is on the watchlist. Every policy sees it from that day's cycle on, and its
 * changes are scored from that day on (a change that day counts, as the first day's changes count
 * for the watchlist of day 1). Without `joinsOn`, every firm is watched from day 1.
 * docs/planner.md documents the interface for users.
 *
 * `SyntheticWorld` is the base of the shipped synthetic families: records borrowed from the
 * simulator (so cohorts are realistic) made active, a rate model that the family gives, changes
 * drawn each day as a Poisson process of the day's rate (a change with probability 1 − e^(−λ)),
 * and approval dates that follow the changes (or not).
 */
import { EnterpriseWorld } from '../../src/sim/enterprises.ts';
import { Rng } from '../../src/sim/rng.ts';
import { addDays } from '../../src/time/cycles.ts';
import type { EnterpriseRecord } from '../../src/upstream/schemas.ts';

export type Severity = 'high' | 'medium' | 'low';

export interface WorldOptions {
  seed: number;
  /** Watched firms. */
  firms: number;
  /** Day 0 (YYYY-MM-DD): the watchlist is added then, and day d is the cycle epoch + d. */
  epoch: string;
  /** Days the backtest will run (a world may use it to place a regime shift). */
  days: number;
}

export interface WorldChange {
  /** Index of the firm, 0 … firms − 1. */
  firm: number;
  /** The top-level record fields the change touched. */
  fields: string[];
  severity: Severity;
}

export interface RefreshWorld {
  readonly firms: number;
  /** Moves to day `day` (the previous day + 1) and returns what its refresh changed. */
  advance(day: number): WorldChange[];
  /** Firm `firm`'s registry record as the upstream answers it on the current day. */
  record(firm: number): EnterpriseRecord;
  /**
   * Its true change rate on the current day: λ, changes per day of a Poisson process (the chance of
   * at least one change that day is 1 − e^(−λ)); 0 once it cannot change. The oracle plans with it.
   */
  trueRate(firm: number): number;
  /** The first day (1 … days) firm `firm` is on the watchlist; absent: day 1 for every firm. */
  joinsOn?(firm: number): number;
}

export interface WorldModule {
  family: string;
  about: string;
  createWorld(opts: WorldOptions): RefreshWorld;
}

/** A standard normal draw. */
export function gaussian(rng: Rng): number {
  const u = Math.max(1e-12, rng.next());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

/** Statuses after which a record no longer changes. */
const CLOSED = /注销|撤销|迁出/;

/** How a synthetic family sets and moves its firms' rates. */
export interface RateModel {
  /** Each firm's base rate at day 0, given the records (for cohort-driven rates). */
  initial(records: readonly EnterpriseRecord[], rng: Rng): Float64Array;
  /** The rate of firm `i` on `day`, given its base rate (bursts and shifts go here). */
  rateOn?(i: number, day: number, base: Float64Array, rng: Rng): number;
  /** Called once at the start of each day before the draws (a regime shift swaps rates here). */
  beforeDay?(day: number, base: Float64Array, rng: Rng): void;
  /** The first day firm `i` is watched (default: day 1, the whole watchlist from the start). */
  joinsOn?(i: number, records: readonly EnterpriseRecord[], rng: Rng): number;
  /** Approval dates: 'follow' (a change is approved on its day) or 'noise' (random, unrelated). */
  dates: 'follow' | 'noise';
}

const SEVERITIES: readonly [Severity, number][] = [
  ['high', 0.04],
  ['medium', 0.2],
  ['low', 1],
];
const CHANGED_FIELDS = ['DOM', 'OPSCOPE', 'TEL', 'EMAIL', 'FRNAME'];

/** The synthetic families' world: see the module comment. */
export class SyntheticWorld implements RefreshWorld {
  readonly firms: number;
  private readonly records: EnterpriseRecord[];
  private readonly base: Float64Array;
  private readonly rng: Rng;
  /** Each firm's rate on the current day, as its changes were drawn. */
  private readonly today: Float64Array;
  private readonly joins: Int32Array | null;
  private day = 0;
  private readonly epoch: string;

  constructor(
    opts: WorldOptions,
    private readonly model: RateModel,
  ) {
    this.firms = opts.firms;
    this.epoch = opts.epoch;
    this.rng = new Rng(opts.seed * 7919 + 17);
    const sim = new EnterpriseWorld({ seed: opts.seed, size: opts.firms, epoch: opts.epoch });
    this.records = sim.all().map((e) => {
      const r = { ...(e as unknown as EnterpriseRecord) };
      // Every firm of a synthetic world is alive: its rate, not its status, says how it changes.
      if (typeof r.ENTSTATUS === 'string' && CLOSED.test(r.ENTSTATUS)) r.ENTSTATUS = '存续';
      return r;
    });
    this.base = model.initial(this.records, this.rng);
    this.today = Float64Array.from(this.base);
    const joinsOn = model.joinsOn;
    this.joins = joinsOn
      ? Int32Array.from({ length: this.firms }, (_, i) => joinsOn(i, this.records, this.rng))
      : null;
    // The last approval before day 0: the time back to a Poisson process's last event is
    // exponential with mean 1/λ (or, for 'noise', unrelated to the rate).
    for (let i = 0; i < this.firms; i++) {
      const r = this.records[i] as EnterpriseRecord;
      const lambda = Math.max(1e-6, this.base[i] as number);
      const back =
        model.dates === 'follow'
          ? Math.ceil(-Math.log(Math.max(1e-12, this.rng.next())) / lambda)
          : Math.ceil(this.rng.next() * 3 * 365);
      r.APPRDATE = addDays(opts.epoch, -Math.min(back, 20 * 365));
      const es = typeof r.ESDATE === 'string' ? r.ESDATE.slice(0, 10) : null;
      if (es !== null && es > (r.APPRDATE as string)) r.APPRDATE = es;
    }
  }

  advance(day: number): WorldChange[] {
    if (day !== this.day + 1) throw new RangeError(`days go one at a time: ${this.day} then ${day}`);
    this.day = day;
    const cycle = addDays(this.epoch, day);
    this.model.beforeDay?.(day, this.base, this.rng);
    const out: WorldChange[] = [];
    for (let i = 0; i < this.firms; i++) {
      const rate = this.model.rateOn
        ? this.model.rateOn(i, day, this.base, this.rng)
        : (this.base[i] as number);
      this.today[i] = rate;
      if (this.rng.next() >= -Math.expm1(-rate)) continue;
      const u = this.rng.next();
      const severity = (SEVERITIES.find(([, p]) => u < p) as [Severity, number])[0];
      const field = CHANGED_FIELDS[this.rng.int(0, CHANGED_FIELDS.length - 1)] as string;
      const r = this.records[i] as EnterpriseRecord;
      (r as Record<string, unknown>)[field] = `${field}-${day}-${this.rng.int(0, 1e6)}`;
      r.APPRDATE =
        this.model.dates === 'follow'
          ? cycle
          : addDays(this.epoch, day - Math.ceil(this.rng.next() * 3 * 365));
      out.push({ firm: i, fields: [field, 'APPRDATE'], severity });
    }
    return out;
  }

  record(firm: number): EnterpriseRecord {
    return this.records[firm] as EnterpriseRecord;
  }

  trueRate(firm: number): number {
    return this.today[firm] as number;
  }

  joinsOn(firm: number): number {
    return this.joins ? (this.joins[firm] as number) : 1;
  }
}

/** Mean change rate of the synthetic families, per day (the simulator's default daily share). */
export const MEAN_RATE = 0.02;

/**
 * Lognormal rates (per day) of mean MEAN_RATE with log-sd `sigma`, capped at 0.9. σ = 1.4 makes the
 * 10% busiest firms about 55% of the changes.
 */
export function lognormalRates(n: number, sigma: number, rng: Rng): Float64Array {
  const mu = Math.log(MEAN_RATE) - (sigma * sigma) / 2;
  return Float64Array.from({ length: n }, () => Math.min(0.9, Math.exp(mu + sigma * gaussian(rng))));
}
