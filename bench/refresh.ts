/**
 * `npm run bench -- refresh`: a backtest of the planner against the simulator's ground truth, with
 * no wall-clock waiting. A world of 10,000 watched firms (src/sim/enterprises.ts: heterogeneous,
 * profile-dependent change rates with bursts) runs for 90 daily cycles, then 30 more in which only
 * the changes of the 90 are scored (so every change has a chance to be seen within the staleness
 * bound). Each cycle the policy plans with the real planner (`planCycle`) under a daily budget of
 * 10%, 25% or 50% of the watchlist, the chosen firms are "fetched" (their state at that cycle),
 * and what the fetch saw feeds the real estimator (`observe`, `estimateRate`, `weightOf`,
 * `nextBoost`, `dueAfter`, cohort priors and the scale: what a worker and the plan job do).
 *
 * Policies:
 * - `today`: the planner before change rates: priority, never fetched first, then the oldest
 *   refresh (round robin).
 * - `new`: the change-rate planner, learning each firm's rate from its own fetches and its cohort.
 * - `oracle`: the same planner given each firm's true base rate (the simulator's, without bursts):
 *   the bound on what estimating the rates can gain.
 *
 * Figures per policy and budget: the share of change events detected (a fetch saw the state the
 * change made before the next change replaced it), detection lag in days (from the cycle whose
 * refresh published the change to the first fetch at or after it; mean and p95, for all changes and
 * for high-severity ones), mean freshness (the share of firm-days whose stored state equals the
 * registry's), the longest time any firm went unrefreshed, and credits spent.
 */
import type { Severity } from '../src/history/classify.ts';
import { normalizeEnterprise } from '../src/normalize/enterprise.ts';
import {
  afterRefresh,
  type ChangeHistory,
  type CohortObservations,
  calibrateScale,
  cohortKey,
  cohortPriors,
  DEFAULT_MAX_STALENESS_DAYS,
  dueAfter,
  emptyHistory,
  estimateRate,
  priorFor,
  SCALE_FILL,
  type ScaleBucket,
  weightOf,
} from '../src/plan/estimate.ts';
import { planCycle, type WatchCandidate } from '../src/plan/planner.ts';
import { EnterpriseWorld } from '../src/sim/enterprises.ts';
import { addDays, cycleStart } from '../src/time/cycles.ts';
import type { EnterpriseRecord } from '../src/upstream/schemas.ts';
import { round } from './support.ts';

export type Policy = 'today' | 'new' | 'oracle';

export interface PolicyFigures {
  policy: Policy;
  budgetShare: number;
  perDay: number;
  events: number;
  detectedShare: number;
  meanLag: number;
  p95Lag: number;
  /** Mean lag of the changes in the last 30 scored days, once the estimates had time to learn. */
  lateMeanLag: number;
  highEvents: number;
  highMeanLag: number;
  highP95Lag: number;
  meanFreshness: number;
  maxStalenessDays: number;
  credits: number;
  /** Credits spent on firms already closed for good (cancelled, revoked and cancelled, moved out). */
  creditsOnClosed: number;
}

export interface RefreshResult {
  firms: number;
  days: number;
  scoredDays: number;
  seed: number;
  changeShare: number;
  /** Change events (firm, cycle) in the scored days, and the high-severity ones. */
  events: number;
  highEvents: number;
  /** Share of the changes made by the 10% most-changing firms (how uneven the world is). */
  top10Share: number;
  runs: PolicyFigures[];
  goals: {
    budgetShare: number;
    meanLagVsToday: number;
    meanLagVsOracle: number;
    highLagVsToday: number;
    stalenessHeld: boolean;
    met: { meanLagVsToday: boolean; meanLagVsOracle: boolean; highLagVsToday: boolean; staleness: boolean };
  };
  met: boolean;
}

const CREDITS_PER_QUERY = 3;
/** Statuses after which a registry record no longer changes. */
const CLOSED: ReadonlySet<string> = new Set(['注销', '吊销，已注销', '撤销', '迁出']);
const SEVERITY_RANK: Record<Severity, number> = { low: 1, medium: 2, high: 3 };

interface Firm {
  pid: string;
  /** The state the registry shows: incremented by every change. */
  version: number;
  /** Cycles (as day numbers) of its changes, and their severities. */
  changeDays: number[];
  changeSeverity: Severity[];
  /** Its true base rate, for the oracle. */
  trueRate: number;
}

/** One policy's view of the watchlist. */
class Run {
  readonly lastFetch: Int32Array;
  readonly seenVersion: Int32Array;
  readonly history: ChangeHistory[];
  readonly rate: Float64Array;
  readonly weight: Float64Array;
  readonly boost: Int8Array;
  readonly due: Float64Array;
  readonly cohort: (string | null)[];
  /** Per event index: the day it was first seen (−1 while not), and whether its own state was seen. */
  firstSeen: Int32Array;
  seenOwn: Uint8Array;
  freshDays = 0;
  firmDays = 0;
  maxStaleness = 0;
  fetches = 0;
  closedFetches = 0;
  scale = Number.POSITIVE_INFINITY;

  constructor(
    readonly policy: Policy,
    readonly budgetShare: number,
    readonly perDay: number,
    n: number,
    events: number,
  ) {
    this.lastFetch = new Int32Array(n).fill(-1);
    this.seenVersion = new Int32Array(n).fill(-1);
    this.history = Array.from({ length: n }, () => emptyHistory());
    this.rate = new Float64Array(n);
    this.weight = new Float64Array(n).fill(1);
    this.boost = new Int8Array(n);
    this.due = new Float64Array(n).fill(Number.NaN);
    this.cohort = new Array(n).fill(null);
    this.firstSeen = new Int32Array(events).fill(-1);
    this.seenOwn = new Uint8Array(events);
  }
}

export async function benchRefresh(
  opts: { firms?: number; days?: number; tail?: number; seed?: number; shares?: number[] } = {},
): Promise<RefreshResult> {
  const firms = opts.firms ?? 10_000;
  const days = opts.days ?? 90;
  const tail = opts.tail ?? DEFAULT_MAX_STALENESS_DAYS;
  const seed = opts.seed ?? 7;
  const shares = opts.shares ?? [0.1, 0.25, 0.5];
  const D = DEFAULT_MAX_STALENESS_DAYS;
  const epoch = '2026-01-01';
  const t0 = performance.now();
  const world = new EnterpriseWorld({ seed, size: firms, epoch });
  const changeShare = world.changeShare;
  // Day 0 is the epoch; the watchlist is added then, and cycles 1..days+tail follow.
  const firmsList: Firm[] = world.all().map((e) => ({
    pid: e.PID,
    version: 0,
    changeDays: [],
    changeSeverity: [],
    trueRate: 0,
  }));
  const indexOf = new Map(firmsList.map((f, i) => [f.pid, i]));
  const rates = world.rates();
  for (const f of firmsList) f.trueRate = rates.get(f.pid) ?? 0;

  // Events of the scored days: (firm, day, severity); the next change of the same firm bounds
  // the window in which its own state could be seen.
  const evFirm: number[] = [];
  const evDay: number[] = [];
  const evSeverity: Severity[] = [];
  const evNext: number[] = [];
  const lastEventOf = new Map<number, number>();
  const dayChanges: { firm: number; severity: Severity }[][] = [[]];
  for (let d = 1; d <= days + tail; d++) {
    const cycle = addDays(epoch, d);
    // Forward one refresh at a time: changesIn of the current cycle is its log.
    world.at(cycle);
    const list = world
      .changesIn(cycle)
      .map((c) => ({ firm: indexOf.get(c.pid) as number, severity: c.severity }));
    dayChanges.push(list);
    if (d > days) continue;
    for (const c of list) {
      const k = evFirm.length;
      evFirm.push(c.firm);
      evDay.push(d);
      evSeverity.push(c.severity);
      evNext.push(Number.POSITIVE_INFINITY);
      const prev = lastEventOf.get(c.firm);
      if (prev !== undefined) evNext[prev] = d;
      lastEventOf.set(c.firm, k);
    }
  }
  // Changes after the scored days still end an event's own window.
  for (let d = days + 1; d <= days + tail; d++)
    for (const c of dayChanges[d] ?? []) {
      const prev = lastEventOf.get(c.firm);
      if (prev !== undefined && evNext[prev] === Number.POSITIVE_INFINITY) evNext[prev] = d;
    }
  const byFirm = new Map<number, number[]>();
  evFirm.forEach((f, k) => {
    const list = byFirm.get(f) ?? [];
    list.push(k);
    byFirm.set(f, list);
  });
  const perFirm = firmsList.map((_, i) => byFirm.get(i)?.length ?? 0).sort((a, b) => b - a);
  const top10Share =
    evFirm.length === 0
      ? 0
      : perFirm.slice(0, Math.ceil(firms / 10)).reduce((a, b) => a + b, 0) / evFirm.length;
  process.stderr.write(
    `refresh: world of ${firms} firms, ${evFirm.length} change events in ${days} days (${round(performance.now() - t0, 0)} ms)\n`,
  );

  const runs: Run[] = [];
  for (const share of shares)
    for (const policy of ['today', 'new', 'oracle'] as Policy[])
      runs.push(new Run(policy, share, Math.floor(firms * share), firms, evFirm.length));

  world.at(epoch);
  const n = firms;
  const cohortCache = new Map<string, string>();
  const rec = (i: number) => world.byPid((firmsList[i] as Firm).pid) as { APPRDATE: string; ESDATE: string };
  const cohortOf = (i: number): string => {
    const f = firmsList[i] as Firm;
    const key = `${i}:${f.version}`;
    let c = cohortCache.get(key);
    if (c === undefined) {
      c = cohortKey(normalizeEnterprise(world.byPid(f.pid) as unknown as EnterpriseRecord));
      cohortCache.set(key, c);
    }
    return c;
  };
  const candidates: WatchCandidate[] = firmsList.map((f, i) => ({
    id: i + 1,
    keyword: f.pid,
    priority: 0,
    pid: f.pid,
    lastRefreshedAt: null,
    refreshedCycle: null,
    lastOutcome: null,
    lastCycle: null,
    addedAt: cycleStart(epoch),
    dueAt: null,
  }));
  const sevSince = new Int8Array(n);
  /** The day the firms' true rates were last read for the oracle (they fall to 0 when a firm closes). */
  let trueRatesDay = -1;
  const cycles = Array.from({ length: days + tail + 1 }, (_, d) => addDays(epoch, d));
  const fetchedAt = cycles.map((c) => new Date(cycleStart(c).getTime() + 600_000));

  for (let d = 1; d <= days + tail; d++) {
    const cycle = addDays(epoch, d);
    world.at(cycle);
    // The day's changes happen before its cycle's fetches (the refresh publishes them).
    for (const c of dayChanges[d] ?? []) {
      const f = firmsList[c.firm] as Firm;
      f.version++;
      f.changeDays.push(d);
      f.changeSeverity.push(c.severity);
    }
    for (const run of runs) {
      // The policy's candidates as its store holds them.
      for (let i = 0; i < n; i++) {
        const c = candidates[i] as WatchCandidate;
        const last = run.lastFetch[i] as number;
        c.lastRefreshedAt = last < 0 ? null : (fetchedAt[last] as Date);
        c.lastCycle = last < 0 ? null : (cycles[last] as string);
        c.refreshedCycle = c.lastCycle;
        c.lastOutcome = last < 0 ? null : 'success';
        const due = run.due[i] as number;
        c.dueAt = last < 0 ? null : run.policy === 'today' ? c.lastRefreshedAt : new Date(due);
      }
      const plan = planCycle({
        cycle,
        candidates,
        doneWatchIds: new Set(),
        donePids: new Set(),
        creditsPerQuery: CREDITS_PER_QUERY,
        creditBudget: run.perDay * CREDITS_PER_QUERY,
        rateLimitPerMinute: 1_000_000,
        windowMinutes: 60,
        maxStalenessDays: D,
      });
      const dayStart = cycleStart(cycle);
      for (const e of plan.selected) {
        const i = e.id - 1;
        const f = firmsList[i] as Firm;
        run.fetches++;
        if (CLOSED.has((world.byPid(f.pid) as { ENTSTATUS: string }).ENTSTATUS)) run.closedFetches++;
        const last = run.lastFetch[i] as number;
        const changed = last >= 0 && run.seenVersion[i] !== f.version;
        // The highest severity among the changes since the last fetch.
        let sev = 0;
        if (changed)
          for (let k = f.changeDays.length - 1; k >= 0 && (f.changeDays[k] as number) > last; k--)
            sev = Math.max(sev, SEVERITY_RANK[f.changeSeverity[k] as Severity]);
        sevSince[i] = sev;
        const severity: Severity | null =
          sev === 3 ? 'high' : sev === 2 ? 'medium' : sev === 1 ? 'low' : null;
        // Scoring: every scored event of this firm since its last fetch is now seen.
        for (const k of byFirm.get(i) ?? []) {
          if ((evDay[k] as number) > d) break;
          if (run.firstSeen[k] === -1 && (evDay[k] as number) <= d) {
            run.firstSeen[k] = d;
            if (d < (evNext[k] as number)) run.seenOwn[k] = 1;
          }
        }
        if (run.policy !== 'today') {
          // What a worker's noteRefresh does (src/plan/store.ts).
          const next = afterRefresh(
            {
              history: run.history[i] as ChangeHistory,
              boost: run.boost[i] as number,
              cohort: run.cohort[i] ?? null,
            },
            {
              cycle,
              changed,
              severity,
              cohort: cohortOf(i),
              usable: true,
              lastApproval: rec(i).APPRDATE,
              established: rec(i).ESDATE,
            },
            last < 0 ? null : (cycles[last] as string),
          );
          run.history[i] = next.history;
          run.boost[i] = next.boost;
          run.cohort[i] = next.cohort;
        }
        run.lastFetch[i] = d;
        run.seenVersion[i] = f.version;
      }
      if (run.policy === 'oracle' && trueRatesDay !== d) {
        trueRatesDay = d;
        const now = world.rates();
        for (const f of firmsList) f.trueRate = now.get(f.pid) ?? 0;
      }
      if (run.policy !== 'today') {
        // What the plan job does once a cycle: cohort priors and the scale, from every entry.
        const pooled = new Map<string, CohortObservations>();
        for (let i = 0; i < n; i++) {
          const key = run.cohort[i];
          if (key === null || key === undefined) continue;
          const h = run.history[i] as ChangeHistory;
          const p = pooled.get(key) ?? {
            cohort: key,
            entries: 0,
            n: 0,
            changes: 0,
            days: 0,
            datedDays: 0,
            datedEvents: 0,
          };
          p.entries++;
          p.n += h.n;
          p.changes += h.changes;
          p.days += h.days;
          p.datedDays = (p.datedDays ?? 0) + (h.datedDays ?? 0);
          p.datedEvents = (p.datedEvents ?? 0) + (h.datedEvents ?? 0);
          pooled.set(key, p);
        }
        const priors = cohortPriors([...pooled.values()]);
        for (const e of plan.selected) {
          const i = e.id - 1;
          const rate =
            run.policy === 'oracle'
              ? Math.max(1e-5, (firmsList[i] as Firm).trueRate)
              : estimateRate(run.history[i] as ChangeHistory, priorFor(run.cohort[i] ?? null, priors));
          run.rate[i] = rate;
          run.weight[i] = weightOf(run.history[i] as ChangeHistory);
        }
        // Entries never fetched count at the prior of everyone.
        const everyone = priors.get('*')?.rate ?? 0.01;
        const buckets = new Map<number, number>();
        for (let i = 0; i < n; i++) {
          const r =
            run.lastFetch[i] === -1
              ? run.policy === 'oracle'
                ? (firmsList[i] as Firm).trueRate
                : everyone
              : (run.rate[i] as number);
          const b = Math.round(8 * Math.log(Math.max(1e-9, (run.weight[i] as number) * Math.max(1e-5, r))));
          buckets.set(b, (buckets.get(b) ?? 0) + 1);
        }
        const scaleBuckets: ScaleBucket[] = [...buckets].map(([b, k]) => ({
          root: Math.exp(b / 16),
          entries: k,
        }));
        run.scale = calibrateScale(scaleBuckets, run.perDay * SCALE_FILL, D);
        for (const e of plan.selected) {
          const i = e.id - 1;
          run.due[i] = dueAfter({
            refreshedAt: dayStart,
            rate: run.rate[i] as number,
            weight: run.weight[i] as number,
            boostLeft: run.boost[i] as number,
            scale: run.scale,
            maxStalenessDays: D,
          }).getTime();
        }
      }
      // Freshness and staleness over the scored days, after this cycle's fetches.
      if (d <= days) {
        for (let i = 0; i < n; i++) {
          const last = run.lastFetch[i] as number;
          run.firmDays++;
          if (last >= 0 && run.seenVersion[i] === (firmsList[i] as Firm).version) run.freshDays++;
          if (last >= 0) run.maxStaleness = Math.max(run.maxStaleness, d - last);
        }
      }
    }
    if (d % 30 === 0)
      process.stderr.write(
        `refresh: day ${d}/${days + tail} (${round((performance.now() - t0) / 1000, 1)} s)\n`,
      );
  }

  const quantile = (xs: number[], q: number) => {
    if (xs.length === 0) return 0;
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  };
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const figures: PolicyFigures[] = runs.map((run) => {
    const lags: number[] = [];
    const lateLags: number[] = [];
    const highLags: number[] = [];
    let detected = 0;
    for (let k = 0; k < evFirm.length; k++) {
      const seen = run.firstSeen[k] as number;
      const lag = (seen === -1 ? days + tail : seen) - (evDay[k] as number);
      lags.push(lag);
      if ((evDay[k] as number) > days - 30) lateLags.push(lag);
      if (evSeverity[k] === 'high') highLags.push(lag);
      if (run.seenOwn[k]) detected++;
    }
    return {
      policy: run.policy,
      budgetShare: run.budgetShare,
      perDay: run.perDay,
      events: evFirm.length,
      detectedShare: round(evFirm.length === 0 ? 0 : detected / evFirm.length, 3),
      meanLag: round(mean(lags), 2),
      p95Lag: quantile(lags, 0.95),
      lateMeanLag: round(mean(lateLags), 2),
      highEvents: highLags.length,
      highMeanLag: round(mean(highLags), 2),
      highP95Lag: quantile(highLags, 0.95),
      meanFreshness: round(run.firmDays === 0 ? 0 : run.freshDays / run.firmDays, 4),
      maxStalenessDays: run.maxStaleness,
      credits: run.fetches * CREDITS_PER_QUERY,
      creditsOnClosed: run.closedFetches * CREDITS_PER_QUERY,
    };
  });
  const at = (p: Policy, s: number) =>
    figures.find((f) => f.policy === p && f.budgetShare === s) as PolicyFigures;
  const goalShare = shares.includes(0.25) ? 0.25 : (shares[0] as number);
  const today = at('today', goalShare);
  const fresh = at('new', goalShare);
  const oracle = at('oracle', goalShare);
  const ratio = (a: number, b: number) =>
    b === 0 ? (a === 0 ? 1 : Number.POSITIVE_INFINITY) : round(a / b, 3);
  const goals = {
    budgetShare: goalShare,
    meanLagVsToday: ratio(fresh.meanLag, today.meanLag),
    meanLagVsOracle: ratio(fresh.meanLag, oracle.meanLag),
    highLagVsToday: ratio(fresh.highMeanLag, today.highMeanLag),
    stalenessHeld: figures.every((f) => f.policy === 'today' || f.maxStalenessDays <= D),
    met: { meanLagVsToday: false, meanLagVsOracle: false, highLagVsToday: false, staleness: false },
  };
  goals.met = {
    meanLagVsToday: goals.meanLagVsToday <= 0.7,
    meanLagVsOracle: goals.meanLagVsOracle <= 1.15,
    highLagVsToday: goals.highLagVsToday <= 0.5,
    staleness: goals.stalenessHeld,
  };
  return {
    firms,
    days: days + tail,
    scoredDays: days,
    seed,
    changeShare,
    events: evFirm.length,
    highEvents: evSeverity.filter((s) => s === 'high').length,
    top10Share: round(top10Share, 3),
    runs: figures,
    goals,
    met: Object.values(goals.met).every(Boolean),
  };
}
