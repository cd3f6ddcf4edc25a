/**
 * `npm run bench -- refresh [--world <family or module>] [--firms N] [--days N] [--seeds S]
 * [--budgets B] [--json FILE]` (bench/run.ts reads them): a backtest of the planner against worlds
 * whose ground truth is known, with no wall-clock waiting. Each world (bench/worlds/world.ts: the
 * interface, and the shipped families) runs for 90 daily cycles (by default), then 30 more in
 * which only the changes of the 90 are scored (so every change has a chance to be seen within the
 * staleness bound). A world may add firms later (`joinsOn`): each policy sees such a firm from its
 * day on, the day's budget is the share of the entries watched that day, and its changes count
 * from that day. In the order production runs them, each cycle: the plan job's learning step
 * (`learnPlanner`: cohort priors, the model, the tail bound and the scale from every entry), the
 * real planner (`planCycle`) under a daily budget of 5%, 10%, 25% or 50% of the watchlist, the
 * chosen firms "fetched" (their record that day), and what each fetch saw fed to what a worker does
 * with it (`afterRefresh`, `estimateRate`, `weightOf`, `dueAfter`, with what the plan learned).
 *
 * Policies:
 * - `rr`: the planner before change rates: priority, never fetched first, then the oldest
 *   refresh (round robin).
 * - `new`: the change-rate planner as it ships, learning each firm's rate from its own fetches,
 *   its cohort and what the whole watchlist teaches (`learnModel`).
 * - `bayes` (bench/bayes.ts): the same planner estimating each firm's rate by Bayes' rule from what its
 *   fetches saw, with the world's true spread of rates as the prior, known from the first day: where
 *   rates stay put, the bound on what a better estimator could gain from the same fetches.
 * - `oracle`: the same planner told every firm's true rate each day (`oracleDue`): the bound on
 *   what estimating the rates can gain.
 * - the ablation, on the first seed of each family: `legacy` (the planner before the learned
 *   model: fixed shrinkage, registry dates at full weight), then one learned part added at a time:
 *   `+shape` (shrinkage toward the cohort by the learned spread of rates), `+dates` (registry dates
 *   weighed by how they predicted), `+hot` (a change raises the next interval's rate as far as
 *   changes cluster), `+equal` (equal intervals while the evidence that rates differ is weak),
 *   `+shift` (a firm whose recent intervals contradict its record is planned at what they show);
 *   `new` adds the tail bound to these.
 *
 * Figures per policy and budget: the share of change events detected (a fetch saw the state the
 * change made before the next change replaced it), detection lag in days (from the cycle whose
 * refresh published the change to the first fetch at or after it; mean and p95, for all changes and
 * for high-severity ones), the longest time any firm went unrefreshed, and credits spent.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cohortKey } from '../src/normalize/cohort.ts';
import { normalizeEnterprise } from '../src/normalize/enterprise.ts';
import {
  basisMoved,
  DEFAULT_MAX_STALENESS_DAYS,
  INITIAL_MODEL,
  intervalDays,
  LEGACY_MODEL,
  type PlanBasis,
  type PlannerModel,
  planBasis,
  plannedWeight,
} from '../src/plan/due.ts';
import {
  afterRefresh,
  type CohortPrior,
  entryPlan,
  isClosedStatus,
  priorFor,
  replanned,
  weightOf,
} from '../src/plan/estimate.ts';
import { learnPlanner } from '../src/plan/learn.ts';
import { type ChangeHistory, emptyHistory, type RatePrior } from '../src/plan/model.ts';
import { planCycle, type WatchCandidate } from '../src/plan/planner.ts';
import { spreadInUse } from '../src/plan/spread.ts';
import { addDays, cycleStart } from '../src/time/cycles.ts';
import { EnterpriseRecord } from '../src/upstream/schemas.ts';
import { bayesRate, spreadPrior } from './bayes.ts';
import { round } from './support.ts';
import * as bursty from './worlds/bursty.ts';
import * as cohortsBlind from './worlds/cohorts-blind.ts';
import * as cohortsPredict from './worlds/cohorts-predict.ts';
import * as datesNoise from './worlds/dates-noise.ts';
import * as growing from './worlds/growing.ts';
import * as heavyTailed from './worlds/heavy-tailed.ts';
import * as hyperactive from './worlds/hyperactive.ts';
import * as regimeShift from './worlds/regime-shift.ts';
import * as simulator from './worlds/simulator.ts';
import * as sleepers from './worlds/sleepers.ts';
import * as twoClasses from './worlds/two-classes.ts';
import * as uniform from './worlds/uniform.ts';
import * as uniformNoise from './worlds/uniform-noise.ts';
import type { RefreshWorld, Severity, WorldModule } from './worlds/world.ts';

export type Policy =
  | 'rr'
  | 'legacy'
  | '+shape'
  | '+dates'
  | '+hot'
  | '+equal'
  | '+shift'
  | 'new'
  | 'bayes'
  | 'oracle';
const ABLATION: readonly Policy[] = ['legacy', '+shape', '+dates', '+hot', '+equal', '+shift'];
/** What `bayes` changes in the learned model: it knows the spread of rates, so nothing pulls its estimates to equal, or to recent habits. */
const BAYES_MODEL: Partial<PlannerModel> = { equal: 0, shift: 0, wake: 1, trust: 1 };

/** The shipped world families, in table order. */
export const FAMILIES: readonly WorldModule[] = [
  simulator,
  heavyTailed,
  regimeShift,
  bursty,
  uniform,
  uniformNoise,
  datesNoise,
  cohortsPredict,
  cohortsBlind,
  sleepers,
  hyperactive,
  twoClasses,
  growing,
];
/** Families on which the planner must be at least 25% better than round robin. */

export interface PolicyFigures {
  policy: Policy;
  budgetShare: number;
  perDay: number;
  detectedShare: number;
  meanLag: number;
  p95Lag: number;
  highMeanLag: number;
  maxStalenessDays: number;
  credits: number;
  creditsOnClosed: number;
  /** What the policy had learned by the last day (not for rr), and how often a day's model pulled intervals to equal. */
  model?: PlannerModel;
  equalDays?: number;
}

export interface WorldFigures {
  family: string;
  seed: number;
  events: number;
  highEvents: number;
  /** Share of the changes made by the 10% most-changing firms (how uneven the world is). */
  top10Share: number;
  runs: PolicyFigures[];
}

/** One family at one budget, over its seeds: what the table shows. */
export interface TableRow {
  family: string;
  budgetShare: number;
  /** Mean lag of new / rr: the worst seed and the mean over seeds. */
  lagRatioWorst: number;
  lagRatioMean: number;
  oracleRatioMean: number;
  /** Mean lag of bayes / rr: the worst seed and the mean (bench/bayes.ts). */
  bayesRatioWorst: number;
  bayesRatioMean: number;
  /** p95 lag (days), worst seed's excess of new over rr, and both on the first seed. */
  p95Excess: number;
  p95New: number;
  p95Rr: number;
  /** Detected share, worst seed's difference new − rr, and both on the first seed. */
  detectedDiff: number;
  detectedNew: number;
  detectedRr: number;
  maxStaleness: number;
  /** Mean lag / rr's of the ablation policies (first seed). */
  ablation: Partial<Record<Policy, number>>;
  /** Over the seeds: mean of new − rr's p95 lag (days) and of new − rr's detected share. */
  p95ExcessMean: number;
  detectedDiffMean: number;
  /** The rules this row is held to (`RULES`), each met or not (a p95 rule only at 25% and above). */
  rules: Partial<Record<RuleName, boolean>>;
  /** The names of the rules, in order. */
  goals: string[];
  met: boolean;
}

/**
 * The planner's rules, on the mean over seeds: `lag` mean lag at most 1.02 × round robin's;
 * `seed` no seed above 1.05 ×; `detected` detected share at least round robin's less 0.5 points;
 * `p95` p95 lag at most round robin's + 1 day (at budgets of 25% and more); `bayes` mean lag
 * within 0.10 of `bayes`'s (as multiples of round robin's; 0.05 at 25% and more); `stale` no
 * entry unrefreshed longer than the staleness bound.
 */
export type RuleName = 'lag' | 'seed' | 'detected' | 'p95' | 'bayes' | 'stale';
export const RULES: Readonly<Record<RuleName, string>> = {
  lag: 'mean lag <= 1.02 rr',
  seed: 'every seed <= 1.05 rr',
  detected: 'detected >= rr - 0.5 pt',
  p95: 'p95 <= rr + 1 d',
  bayes: 'within 0.10 of bayes (0.05 at 25%+)',
  stale: 'staleness <= 30 d',
};

export interface RefreshResult {
  firms: number;
  days: number;
  scoredDays: number;
  seeds: number[];
  shares: number[];
  families: { family: string; about: string }[];
  worlds: WorldFigures[];
  table: TableRow[];
  met: boolean;
}

const CREDITS_PER_QUERY = 3;
const SEVERITY_RANK: Record<Severity, number> = { low: 1, medium: 2, high: 3 };

/** One policy's view of the watchlist. */
class Run {
  readonly lastFetch: Int32Array;
  readonly seenVersion: Int32Array;
  readonly history: ChangeHistory[];
  readonly rate: Float64Array;
  readonly boost: Int8Array;
  readonly due: Float64Array;
  readonly cohort: (string | null)[];
  maxStaleness = 0;
  fetches = 0;
  closedFetches = 0;
  scale = Number.POSITIVE_INFINITY;
  model: PlannerModel;
  priors = new Map<string, CohortPrior>();
  equalDays = 0;
  /** What the refreshed entries' due times were last planned under (PlannerModel.basis). */
  basis: PlanBasis | undefined;
  /** The oracle's: changes expected since the last fetch, and the lag they have accrued (days), at each day's true rates. */
  readonly pending: Float64Array;
  readonly accrued: Float64Array;

  constructor(
    readonly policy: Policy,
    readonly budgetShare: number,
    readonly perDay: number,
    n: number,
  ) {
    this.lastFetch = new Int32Array(n).fill(-1);
    this.seenVersion = new Int32Array(n).fill(-1);
    this.history = Array.from({ length: n }, () => emptyHistory());
    this.rate = new Float64Array(n);
    this.boost = new Int8Array(n);
    this.due = new Float64Array(n).fill(Number.NaN);
    this.cohort = new Array(n).fill(null);
    this.pending = new Float64Array(policy === 'oracle' ? n : 0);
    this.accrued = new Float64Array(policy === 'oracle' ? n : 0);
    this.model = policy === 'legacy' ? LEGACY_MODEL : INITIAL_MODEL;
  }
}

/** The model a policy plans with, from what the watchlist taught (`learned`). */
function modelFor(policy: Policy, learnedModel: PlannerModel): PlannerModel {
  // The ablation's steps plan as the planner did before the learned spread; `new` reads through it.
  const { spread, clustered, ...learned } = learnedModel;
  switch (policy) {
    case 'legacy':
    case 'rr':
      return LEGACY_MODEL;
    case '+shape':
      return { ...LEGACY_MODEL, shape: learned.shape };
    case '+dates':
      return { ...LEGACY_MODEL, shape: learned.shape, datedWeight: learned.datedWeight };
    case '+hot':
      return { ...learned, equal: 0, tailDays: Number.POSITIVE_INFINITY, shift: 0 };
    case '+equal':
      return { ...learned, tailDays: Number.POSITIVE_INFINITY, shift: 0 };
    case '+shift':
      return { ...learned, tailDays: Number.POSITIVE_INFINITY };
    case 'new':
      return spread === undefined ? learned : { ...learned, spread, ...(clustered ? { clustered } : {}) };
    case 'bayes':
      return { ...learned, ...BAYES_MODEL };
    case 'oracle':
      return { ...learned, hot: 1, wake: 1, trust: 1, equal: 0, boost: false };
  }
}

/** Refreshes a day at a budget of `share` of `watched` entries (at least one). */
export const perDayOf = (watched: number, share: number) => Math.max(1, Math.floor(watched * share));

const DAY_MS = 86_400_000;

/**
 * The oracle's due times before the plan of day `d` (starting at `dayStart`), from each day's
 * true rates. The planner gives an entry of rate λ and weight w the interval I = c / √(w λ); over
 * it, the changes of a firm whose rate stays put accrue λ·I·(I − 1)/2 days of lag (a change on
 * day k of the interval waits I − k days). The oracle makes an entry due when the lag its changes
 * have accrued since its last fetch, at the true rate of every day in between, reaches what the
 * interval at today's rate allows, projecting today's rate forward. Where rates stay put this is
 * the planner's interval exactly; a firm that woke up is due as soon as its new changes have
 * waited that long, and one that went quiet is still fetched for the changes it made before.
 * Entries past that point are due in the past, the more the longer their changes have waited.
 */
function oracleDue(
  run: Run,
  watched: readonly number[],
  trueRate: Float64Array,
  d: number,
  dayStart: Date,
): void {
  const { model, scale } = run;
  const t0 = dayStart.getTime();
  const cap = Math.max(1, model.tailDays);
  for (const i of watched) {
    const last = run.lastFetch[i] as number;
    if (last < 0) continue;
    const since = d - last;
    const lambda = Math.max(1e-9, trueRate[i] as number);
    const interval = intervalDays(
      lambda,
      plannedWeight(weightOf(run.history[i] as ChangeHistory), model),
      scale,
      cap,
    );
    const pending = run.pending[i] as number;
    const need = (lambda * interval * (interval - 1)) / 2 - (run.accrued[i] as number);
    let t: number;
    if (need <= 0) t = need / Math.max(pending, 1e-9);
    else {
      // The days t ≥ 1 after which accrued + pending·t + λ·t·(t − 1)/2 reaches the target.
      const b = pending - lambda / 2;
      t = Math.max(1 - since, (2 * need) / (b + Math.sqrt(b * b + 2 * lambda * need)));
    }
    run.due[i] = t0 + Math.min(t, cap - since) * DAY_MS;
  }
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * Firm `i`'s record on `day` as the planner reads it, checked against the enterprise query's
 * schema: a PID and a name of its own when the world gives none (the backtest names the firm), a
 * clear error naming the field when a value is of a shape the upstream never answers.
 */
function worldRecord(family: string, world: RefreshWorld, i: number, day: number): EnterpriseRecord {
  const raw: unknown = world.record(i);
  const at = `world ${family}: record(${i}) on day ${day}`;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(
      `${at} is ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}, not an object of registry fields`,
    );
  const parsed = EnterpriseRecord.safeParse({ PID: `P${i}`, ENTNAME: `firm ${i}`, ...raw });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'the record';
    throw new Error(
      `${at}: ${field}: ${issue?.message ?? 'not a registry record'} (docs/planner.md, Worlds)`,
    );
  }
  return parsed.data;
}

/** Runs every policy and budget over one world. */
export function runWorld(
  module: WorldModule,
  world: RefreshWorld,
  o: { seed: number; days: number; tail: number; shares: number[]; policies: Policy[]; epoch: string },
): WorldFigures {
  const D = DEFAULT_MAX_STALENESS_DAYS;
  const { days, tail, epoch } = o;
  const n = world.firms;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`world ${module.family}: firms is ${String(n)}, not a whole number of at least 1`);
  // The day each firm joins the watchlist (1: from the start); it is planned and scored from then.
  const joins = Int32Array.from({ length: n }, (_, i) => {
    const day = world.joinsOn ? world.joinsOn(i) : 1;
    if (!Number.isInteger(day) || day < 1 || day > days)
      throw new Error(
        `world ${module.family}: joinsOn(${i}) is ${String(day)}, not a day from 1 to ${days} (the days scored)`,
      );
    return day;
  });
  const joinOrder = Array.from(joins.keys()).sort((a, b) => (joins[a] as number) - (joins[b] as number));
  /** The firms watched so far, in the order they joined (so by watch id). */
  const watched: number[] = [];
  // The days' changes, in advance: (firm, severity) per day; events are those of the scored days.
  const version = new Int32Array(n);
  const evFirm: number[] = [];
  const evDay: number[] = [];
  const evSeverity: Severity[] = [];
  const evNext: number[] = [];
  const lastEventOf = new Map<number, number>();
  const byFirm: number[][] = Array.from({ length: n }, () => []);
  const runs: Run[] = [];
  // The world only goes forward: every run steps through the same day before the world moves on.
  // An event's lag and detection are read at the end from the days each firm was fetched.
  for (const share of o.shares)
    for (const policy of o.policies) {
      runs.push(new Run(policy, share, perDayOf(n, share), n));
    }
  const fetchLog: number[][][] = runs.map(() => Array.from({ length: n }, () => []));
  const changeDays: number[][] = Array.from({ length: n }, () => []);
  const changeSeverity: Severity[][] = Array.from({ length: n }, () => []);
  const cohortCache = new Map<string, string>();
  let today = 0;
  // A record is read and checked once a version: a world's record changes only with a change it reports.
  const recordCache = new Map<number, { version: number; record: EnterpriseRecord }>();
  const recordOf = (i: number): EnterpriseRecord => {
    const hit = recordCache.get(i);
    if (hit !== undefined && hit.version === version[i]) return hit.record;
    const record = worldRecord(module.family, world, i, today);
    recordCache.set(i, { version: version[i] as number, record });
    return record;
  };
  const cohortOf = (i: number): string => {
    const key = `${i}:${version[i]}`;
    let c = cohortCache.get(key);
    if (c === undefined) {
      c = cohortKey(normalizeEnterprise(recordOf(i)));
      cohortCache.set(key, c);
    }
    return c;
  };
  const candidates: WatchCandidate[] = Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    keyword: `firm ${i}`,
    priority: 0,
    pid: `P${i}`,
    lastRefreshedAt: null,
    refreshedCycle: null,
    lastOutcome: null,
    lastCycle: null,
    addedAt: cycleStart(addDays(epoch, (joins[i] as number) - 1)),
    dueAt: null,
  }));
  const cycles = Array.from({ length: days + tail + 1 }, (_, d) => addDays(epoch, d));
  let joined = 0;
  const fetchedAt = cycles.map((c) => new Date(cycleStart(c).getTime() + 600_000));
  const trueRate = new Float64Array(n);

  for (let d = 1; d <= days + tail; d++) {
    const cycle = cycles[d] as string;
    while (joined < n && (joins[joinOrder[joined] as number] as number) <= d)
      watched.push(joinOrder[joined++] as number);
    const watching = watched.map((i) => candidates[i] as WatchCandidate);
    // The day's changes happen before its cycle's fetches (the refresh publishes them).
    today = d;
    const list = world.advance(d).map((c) => ({ firm: c.firm, severity: c.severity }));
    for (const c of list) {
      if (!Number.isInteger(c.firm) || c.firm < 0 || c.firm >= n)
        throw new Error(
          `world ${module.family}: day ${d} changed firm ${String(c.firm)}, not one of 0 … ${n - 1}`,
        );
      version[c.firm] = (version[c.firm] as number) + 1;
      (changeDays[c.firm] as number[]).push(d);
      (changeSeverity[c.firm] as Severity[]).push(c.severity);
      const prev = lastEventOf.get(c.firm);
      if (prev !== undefined && evNext[prev] === Number.POSITIVE_INFINITY) evNext[prev] = d;
      // A change before the firm joins the watchlist is part of what its first fetch finds, not an event.
      if (d > days || d < (joins[c.firm] as number)) {
        lastEventOf.delete(c.firm);
        continue;
      }
      const k = evFirm.length;
      evFirm.push(c.firm);
      evDay.push(d);
      evSeverity.push(c.severity);
      evNext.push(Number.POSITIVE_INFINITY);
      lastEventOf.set(c.firm, k);
      (byFirm[c.firm] as number[]).push(k);
    }
    for (let i = 0; i < n; i++) trueRate[i] = world.trueRate(i);
    for (const run of runs)
      if (run.policy === 'oracle')
        for (const i of watched)
          if ((run.lastFetch[i] as number) >= 0) {
            // Changes already pending wait one more day; today's come at today's rate.
            run.accrued[i] = (run.accrued[i] as number) + (run.pending[i] as number);
            run.pending[i] = (run.pending[i] as number) + (trueRate[i] as number);
          }
    const perDayToday = (share: number) => perDayOf(watched.length, share);
    let prior: Float64Array | null = null;
    const spread = () => {
      prior ??= spreadPrior(watched.map((i) => trueRate[i] as number));
      return prior;
    };
    const closedToday = new Uint8Array(n);
    for (const i of watched) if (isClosedStatus(String(recordOf(i).ENTSTATUS ?? ''))) closedToday[i] = 1;

    for (const [r, run] of runs.entries()) {
      const perDay = perDayToday(run.budgetShare);
      if (run.policy !== 'rr') {
        // What the plan job does before each cycle: cohort priors, the model and the scale, from every entry.
        const learned = learnPlanner(
          watched.map((i) => {
            const fetched = run.lastFetch[i] !== -1;
            const h = run.history[i] as ChangeHistory;
            return {
              history: h,
              cohort: run.cohort[i] ?? null,
              rate:
                run.policy === 'oracle' ? (trueRate[i] as number) : fetched ? (run.rate[i] as number) : null,
              weight: weightOf(h),
            };
          }),
          perDay,
          D,
          run.model,
          (m) => modelFor(run.policy, m),
          { spread: run.policy === 'new' },
        );
        run.priors = learned.priors;
        run.model = learned.model;
        run.scale = learned.scale;
        if (run.model.equal >= 1) run.equalDays++;
      }
      if (run.policy === 'oracle') oracleDue(run, watched, trueRate, d, cycleStart(cycle));
      for (const i of watched) {
        const c = candidates[i] as WatchCandidate;
        const last = run.lastFetch[i] as number;
        c.lastRefreshedAt = last < 0 ? null : (fetchedAt[last] as Date);
        c.lastCycle = last < 0 ? null : (cycles[last] as string);
        c.refreshedCycle = c.lastCycle;
        c.lastOutcome = last < 0 ? null : 'success';
        c.dueAt = last < 0 ? null : run.policy === 'rr' ? c.lastRefreshedAt : new Date(run.due[i] as number);
      }
      const plan = planCycle({
        cycle,
        candidates: watching,
        doneWatchIds: new Set(),
        donePids: new Set(),
        creditsPerQuery: CREDITS_PER_QUERY,
        creditBudget: perDay * CREDITS_PER_QUERY,
        rateLimitPerMinute: 1_000_000,
        windowMinutes: 60,
        maxStalenessDays: D,
      });
      const log = fetchLog[r] as number[][];
      for (const e of plan.selected) {
        const i = e.id - 1;
        run.fetches++;
        if (closedToday[i]) run.closedFetches++;
        (log[i] as number[]).push(d);
        const last = run.lastFetch[i] as number;
        const changed = last >= 0 && run.seenVersion[i] !== version[i];
        let sev = 0;
        if (changed) {
          const cd = changeDays[i] as number[];
          const cs = changeSeverity[i] as Severity[];
          for (let k = cd.length - 1; k >= 0 && (cd[k] as number) > last; k--)
            sev = Math.max(sev, SEVERITY_RANK[cs[k] as Severity]);
        }
        const severity: Severity | null =
          sev === 3 ? 'high' : sev === 2 ? 'medium' : sev === 1 ? 'low' : null;
        if (run.policy !== 'rr') {
          const rec = recordOf(i);
          const next = afterRefresh(
            {
              history: run.history[i] as ChangeHistory,
              boost: run.boost[i] as number,
              cohort: run.cohort[i] ?? null,
              rate: last < 0 ? null : (run.rate[i] as number),
              mean: run.model.rate,
            },
            {
              cycle,
              changed,
              severity,
              cohort: cohortOf(i),
              usable: true,
              lastApproval: typeof rec.APPRDATE === 'string' ? rec.APPRDATE : null,
              established: typeof rec.ESDATE === 'string' ? rec.ESDATE : null,
            },
            last < 0 ? null : (cycles[last] as string),
          );
          run.history[i] = next.history;
          run.boost[i] = next.boost;
          run.cohort[i] = next.cohort;
        }
        run.lastFetch[i] = d;
        run.seenVersion[i] = version[i] as number;
        if (run.policy === 'oracle') {
          run.pending[i] = 0;
          run.accrued[i] = 0;
        }
      }
      if (run.policy !== 'rr' && run.policy !== 'oracle') {
        // What the workers do with each fetch: estimate, weight and due time, from what the plan job learned.
        const priorOf = new Map<string | null, RatePrior>();
        const { model } = run;
        const priorAt = (i: number) => {
          const key = run.cohort[i] ?? null;
          let prior = priorOf.get(key);
          if (prior === undefined) {
            prior = priorFor(key, run.priors, model.shape, spreadInUse(model));
            priorOf.set(key, prior);
          }
          return prior;
        };
        // The ablation's steps without a tail bound plan without one (as the planner before them).
        const maxDays = Number.POSITIVE_INFINITY;
        for (const e of plan.selected) {
          const i = e.id - 1;
          const prior = priorAt(i);
          const h = run.history[i] as ChangeHistory;
          if (!model.boost) run.boost[i] = 0;
          const planned = entryPlan({
            history: h,
            prior,
            boost: run.boost[i] as number,
            from: cycle,
            model,
            scale: run.scale,
            maxStalenessDays: maxDays,
            ...(run.policy === 'bayes' ? { rate: bayesRate(h, spread(), model.datedWeight) } : {}),
          });
          run.rate[i] = planned.rate;
          run.due[i] = planned.due.getTime();
        }
        // What the plan job does next (src/plan/store.ts refreshPlannerState): once the model or
        // the scale moved from what the due times were planned under, every other refreshed entry
        // planned again, where its plan moved.
        const basis = planBasis(model, run.scale);
        const replan = basisMoved(run.basis, basis);
        if (replan) run.basis = basis;
        for (const i of replan ? watched : []) {
          const last = run.lastFetch[i] as number;
          if (last < 0 || last === d) continue;
          const prior = priorAt(i);
          const h = run.history[i] as ChangeHistory;
          const next = replanned(
            {
              history: h,
              prior,
              boost: run.boost[i] as number,
              from: h.cycle ?? (cycles[last] as string),
              model,
              scale: run.scale,
              maxStalenessDays: maxDays,
              ...(run.policy === 'bayes' ? { rate: bayesRate(h, spread(), model.datedWeight) } : {}),
            },
            { rate: run.rate[i] as number, due: new Date(run.due[i] as number) },
          );
          if (next) {
            run.rate[i] = next.rate;
            run.due[i] = next.due.getTime();
          }
        }
      }
      if (run.policy === 'oracle')
        for (const e of plan.selected) {
          const i = e.id - 1;
          run.rate[i] = trueRate[i] as number;
        }
      if (d <= days)
        for (const i of watched) {
          const last = run.lastFetch[i] as number;
          if (last >= 0) run.maxStaleness = Math.max(run.maxStaleness, d - last);
        }
    }
  }

  const perFirm = byFirm.map((l) => l.length).sort((a, b) => b - a);
  const top10Share =
    evFirm.length === 0 ? 0 : perFirm.slice(0, Math.ceil(n / 10)).reduce((a, b) => a + b, 0) / evFirm.length;
  const figures = runs.map((run, r): PolicyFigures => {
    const log = fetchLog[r] as number[][];
    const lags: number[] = [];
    const highLags: number[] = [];
    let detected = 0;
    for (let k = 0; k < evFirm.length; k++) {
      const day = evDay[k] as number;
      const fetches = log[evFirm[k] as number] as number[];
      // The first fetch at or after the change's day.
      let lo = 0;
      let hi = fetches.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((fetches[mid] as number) < day) lo = mid + 1;
        else hi = mid;
      }
      const seen = lo < fetches.length ? (fetches[lo] as number) : -1;
      const lag = (seen === -1 ? days + tail : seen) - day;
      lags.push(lag);
      if (evSeverity[k] === 'high') highLags.push(lag);
      if (seen !== -1 && seen < (evNext[k] as number)) detected++;
    }
    return {
      policy: run.policy,
      budgetShare: run.budgetShare,
      perDay: run.perDay,
      detectedShare: round(evFirm.length === 0 ? 0 : detected / evFirm.length, 4),
      meanLag: round(mean(lags), 3),
      p95Lag: quantile(lags, 0.95),
      highMeanLag: round(mean(highLags), 2),
      maxStalenessDays: run.maxStaleness,
      credits: run.fetches * CREDITS_PER_QUERY,
      creditsOnClosed: run.closedFetches * CREDITS_PER_QUERY,
      ...(run.policy === 'rr'
        ? {}
        : {
            // The model as learned, its spread left out (106 shares; `clustered` says whether it was read).
            model: {
              ...run.model,
              spread: undefined,
              shape: round(run.model.shape, 3),
              equal: round(run.model.equal, 3),
              rate: round(run.model.rate, 5),
              datedWeight: round(run.model.datedWeight, 3),
              hot: round(run.model.hot, 3),
            },
            equalDays: run.equalDays,
          }),
    };
  });
  return {
    family: module.family,
    seed: o.seed,
    events: evFirm.length,
    highEvents: evSeverity.filter((s) => s === 'high').length,
    top10Share: round(top10Share, 3),
    runs: figures,
  };
}

/** The table's rows: one per family and budget, over the seeds. */
export function tableOf(worlds: WorldFigures[], shares: number[]): TableRow[] {
  const rows: TableRow[] = [];
  const families = [...new Set(worlds.map((w) => w.family))];
  for (const family of families) {
    const ws = worlds.filter((w) => w.family === family);
    for (const share of shares) {
      const at = (w: WorldFigures, p: Policy) =>
        w.runs.find((f) => f.policy === p && f.budgetShare === share);
      const ratios: number[] = [];
      const oracle: number[] = [];
      const bayes: number[] = [];
      const p95Diffs: number[] = [];
      const detectedDiffs: number[] = [];
      let p95Excess = Number.NEGATIVE_INFINITY;
      let detectedDiff = Number.POSITIVE_INFINITY;
      let maxStaleness = 0;
      const fairTail = share >= 0.25;
      for (const w of ws) {
        const rr = at(w, 'rr') as PolicyFigures;
        const fresh = at(w, 'new') as PolicyFigures;
        const ratio = rr.meanLag === 0 ? 1 : fresh.meanLag / rr.meanLag;
        ratios.push(ratio);
        const o = at(w, 'oracle');
        if (o) oracle.push(rr.meanLag === 0 ? 1 : o.meanLag / rr.meanLag);
        const b = at(w, 'bayes');
        if (b) bayes.push(rr.meanLag === 0 ? 1 : b.meanLag / rr.meanLag);
        p95Diffs.push(fresh.p95Lag - rr.p95Lag);
        detectedDiffs.push(fresh.detectedShare - rr.detectedShare);
        p95Excess = Math.max(p95Excess, fresh.p95Lag - rr.p95Lag);
        detectedDiff = Math.min(detectedDiff, fresh.detectedShare - rr.detectedShare);
        maxStaleness = Math.max(maxStaleness, fresh.maxStalenessDays);
      }
      const rules: Partial<Record<RuleName, boolean>> = {
        lag: mean(ratios) <= 1.02 + 1e-9,
        seed: Math.max(...ratios) <= 1.05 + 1e-9,
        detected: mean(detectedDiffs) >= -0.005 - 1e-9,
        ...(fairTail ? { p95: mean(p95Diffs) <= 1 + 1e-9 } : {}),
        ...(bayes.length > 0 ? { bayes: mean(ratios) - mean(bayes) <= (fairTail ? 0.05 : 0.1) + 1e-9 } : {}),
        stale: maxStaleness <= DEFAULT_MAX_STALENESS_DAYS,
      };
      const goals = (Object.keys(RULES) as RuleName[])
        .filter((k) => rules[k] !== undefined)
        .map((k) => RULES[k]);
      const met = Object.values(rules).every((v) => v);
      const first = ws[0] as WorldFigures;
      const rr0 = at(first, 'rr') as PolicyFigures;
      const ablation: Partial<Record<Policy, number>> = {};
      for (const p of [...ABLATION, 'new'] as Policy[]) {
        const f = at(first, p);
        if (f) ablation[p] = round(rr0.meanLag === 0 ? 1 : f.meanLag / rr0.meanLag, 3);
      }
      rows.push({
        family,
        budgetShare: share,
        lagRatioWorst: round(Math.max(...ratios), 3),
        lagRatioMean: round(mean(ratios), 3),
        oracleRatioMean: round(mean(oracle), 3),
        bayesRatioWorst: round(bayes.length === 0 ? 0 : Math.max(...bayes), 3),
        bayesRatioMean: round(mean(bayes), 3),
        p95Excess,
        p95New: (at(first, 'new') as PolicyFigures).p95Lag,
        p95Rr: rr0.p95Lag,
        detectedDiff: round(detectedDiff, 4),
        detectedNew: (at(first, 'new') as PolicyFigures).detectedShare,
        detectedRr: rr0.detectedShare,
        maxStaleness,
        ablation,
        p95ExcessMean: round(mean(p95Diffs), 3),
        detectedDiffMean: round(mean(detectedDiffs), 4),
        rules,
        goals,
        met,
      });
    }
  }
  return rows;
}

let hooked = false;

/**
 * A world module: a shipped family by name (`heavy-tailed`, the files of bench/worlds/), or a
 * module loaded from a path relative to `from` (the caller's directory). The module loads as an
 * ES module wherever it lies (bench/world-hooks.ts), so it may use top-level await without a
 * package.json of its own. The spec it returns is the family's name or the module's absolute path.
 */
export async function loadWorld(
  spec: string,
  from: string = process.cwd(),
): Promise<WorldModule & { spec: string }> {
  const family = FAMILIES.find((f) => f.family === spec || `${f.family}.ts` === spec);
  if (family)
    return {
      spec: family.family,
      family: family.family,
      about: family.about,
      createWorld: family.createWorld,
    };
  const looksLikePath = /[/\\]/.test(spec) || /\.[cm]?[jt]sx?$/.test(spec);
  if (!looksLikePath)
    throw new Error(
      `no world family "${spec}": the shipped families are ${FAMILIES.map((f) => f.family).join(', ')}; a module of yours is a path (./${spec}.ts)`,
    );
  const path = isAbsolute(spec) ? spec : resolve(from, spec);
  if (!existsSync(path)) throw new Error(`cannot load world module ${spec}: no file ${path}`);
  if (!hooked) {
    register(new URL('./world-hooks.ts', import.meta.url));
    hooked = true;
  }
  let m: Partial<WorldModule>;
  try {
    m = (await import(pathToFileURL(path).href)) as Partial<WorldModule>;
  } catch (err) {
    throw new Error(`cannot load world module ${spec}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof m.createWorld !== 'function')
    throw new Error(`world module ${spec} exports no createWorld(options) (see docs/planner.md, Worlds)`);
  return {
    spec: path,
    family: typeof m.family === 'string' ? m.family : spec,
    about: typeof m.about === 'string' ? m.about : '',
    createWorld: m.createWorld,
  };
}

/** One world to run: a family by name or a module by path, and a seed. */
export interface WorldJob {
  spec: string;
  seed: number;
  firms: number;
  days: number;
  tail: number;
  shares: number[];
  policies: Policy[];
}

/** A world module by the name of a shipped family, or loaded from a path. */
export async function worldFor(spec: string): Promise<WorldModule> {
  return await loadWorld(spec);
}

/** Runs one job here. */
export async function runJob(job: WorldJob): Promise<WorldFigures> {
  const module = await worldFor(job.spec);
  const epoch = '2026-01-01';
  const world = module.createWorld({ seed: job.seed, firms: job.firms, epoch, days: job.days });
  return runWorld(module, world, { ...job, epoch });
}

/** Runs one job in a child process (bench/refresh-worker.ts), which prints its figures as JSON. */
function runChild(job: WorldJob): Promise<WorldFigures> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        fileURLToPath(new URL('./refresh-worker.ts', import.meta.url)),
        JSON.stringify(job),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      out += s;
    });
    child.on('error', fail);
    child.on('close', (code) => {
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(out);
      } catch {}
      const error = (parsed as { error?: unknown } | null)?.error;
      if (typeof error === 'string') fail(new Error(`${job.spec} seed ${job.seed}: ${error}`));
      else if (code !== 0 || parsed === null)
        fail(new Error(`refresh: the run of ${job.spec} seed ${job.seed} failed (exit ${code})`));
      else done(parsed as WorldFigures);
    });
  });
}

export async function benchRefresh(
  opts: {
    firms?: number;
    days?: number;
    tail?: number;
    seeds?: number[];
    shares?: number[];
    worlds?: readonly WorldModule[];
    /** Run the ablation policies on the first seed (default true). */
    ablation?: boolean;
    /** Budgets of the ablation runs (default 25%). */
    ablationShares?: number[];
    /** Worlds run at once, each in its own process (default 1: in this process). */
    parallel?: number;
  } = {},
): Promise<RefreshResult> {
  const firms = opts.firms ?? 1_000;
  const days = opts.days ?? 90;
  const tail = opts.tail ?? DEFAULT_MAX_STALENESS_DAYS;
  const seeds = opts.seeds ?? [1, 2, 3, 4, 5];
  const shares = opts.shares ?? [0.05, 0.1, 0.25, 0.5];
  const worlds = opts.worlds ?? FAMILIES;
  const ablationShares = (opts.ablationShares ?? [0.25]).filter((s) => shares.includes(s));
  const t0 = performance.now();
  const jobs: WorldJob[] = [];
  for (const module of worlds)
    for (const seed of seeds) {
      const spec = 'spec' in module && typeof module.spec === 'string' ? module.spec : module.family;
      jobs.push({ spec, seed, firms, days, tail, shares, policies: ['rr', 'new', 'bayes', 'oracle'] });
      // The ablation on the first seed, at a few budgets (a world of its own: the same seed, the same changes).
      if (seed === seeds[0] && opts.ablation !== false && ablationShares.length > 0)
        jobs.push({ spec, seed, firms, days, tail, shares: ablationShares, policies: ['rr', ...ABLATION] });
    }
  const results: WorldFigures[] = new Array(jobs.length);
  let next = 0;
  const lanes = Math.max(1, Math.min(opts.parallel ?? 1, jobs.length));
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < jobs.length) {
        const k = next++;
        const job = jobs[k] as WorldJob;
        const t = performance.now();
        const w = lanes > 1 ? await runChild(job) : await runJob(job);
        results[k] = w;
        process.stderr.write(
          `refresh: ${w.family} seed ${w.seed}${job.policies.includes('legacy') ? ' (ablation)' : ''}: ${w.events} changes, top 10% make ${(w.top10Share * 100).toFixed(0)}% (${round((performance.now() - t) / 1000, 1)} s, ${round((performance.now() - t0) / 1000, 1)} s in all)\n`,
        );
      }
    }),
  );
  // The ablation's runs join their seed's.
  const out: WorldFigures[] = [];
  for (const [k, job] of jobs.entries()) {
    const w = results[k] as WorldFigures;
    if (job.policies.includes('legacy')) {
      const main = out.find((x) => x.family === w.family && x.seed === w.seed) as WorldFigures;
      main.runs.push(...w.runs.filter((f) => f.policy !== 'rr'));
    } else out.push(w);
  }
  const table = tableOf(out, shares);
  return {
    firms,
    days: days + tail,
    scoredDays: days,
    seeds,
    shares,
    families: worlds.map((w) => ({ family: w.family, about: w.about })),
    worlds: out,
    table,
    met: table.every((r) => r.met),
  };
}
