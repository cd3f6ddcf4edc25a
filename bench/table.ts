/** The printed table of bench/results.json: one line per figure, with its target and verdict. */

import type { CliResult } from './cli.ts';
import type { ConsoleResult } from './console.ts';
import type { CreditResult } from './credit.ts';
import { BURST_PER_SECOND, type DeliveryResult, steadyP99Ms } from './delivery.ts';
import type { DiffResult } from './diff.ts';
import type { ExportResult } from './export.ts';
import type { LoadResult } from './load.ts';
import type { MemoryResult } from './memory.ts';
import type { PlannerResult } from './planner.ts';
import type { RateResult } from './rate.ts';
import type { RefreshResult } from './refresh.ts';
import type { SoakResult, SoakRun } from './soak.ts';
import type { Machine } from './support.ts';

interface Document {
  command: string;
  machine: Machine;
  parts: Record<string, unknown>;
}

export type Line = [figure: string, value: string, target: string, verdict: string];

const n = (x: number) => x.toLocaleString('en-US');
const yes = (ok: boolean) => (ok ? 'met' : 'MISSED');

function rateLines(r: RateResult): Line[] {
  const lines: Line[] = [];
  for (const run of r.runs) {
    // No complete window of L calls (a run of fewer calls than L, as a smoke run makes): no steady rate.
    const steady = Number.isFinite(run.steadyPerMinute)
      ? `${run.utilization.toFixed(3)} of L (${run.steadyPerMinute}/min of ${run.limitPerMinute})`
      : `steady rate n/a (fewer calls than L = ${run.limitPerMinute}; whole run ${run.wholeRunPerMinute}/min)`;
    lines.push([
      `rate, ${run.workers} workers, ${n(run.entries)} entries`,
      `${steady}; ${run.rateLimitExceeded} rate_limit_exceeded; wall ${run.wallSeconds} s`,
      '>= 0.97, 0 refusals',
      yes(run.utilization >= 0.97 && run.rateLimitExceeded === 0),
    ]);
  }
  for (const run of r.runs) {
    lines.push([
      `credit, clean, ${run.workers} workers`,
      `${run.creditEfficiency.toFixed(2)} (${n(run.billedQueries)} billed / ${n(run.distinctEnterprises)} enterprises)`,
      '1.00',
      yes(run.billedQueries === run.distinctEnterprises),
    ]);
  }
  return lines;
}

function creditLines(c: CreditResult): Line[] {
  return [
    [
      `credit, ${c.kills} x SIGKILL, ${n(c.entries)} entries`,
      `${c.efficiency.toFixed(3)} (${n(c.billedQueries)} billed / ${n(c.distinctEnterprises)}); ${c.extraBilled} extra = ${c.extraPerKill} per kill; wall ${c.wallSeconds} s`,
      '<= 1 extra per kill',
      yes(c.met),
    ],
  ];
}

function loadLines(l: LoadResult): Line[] {
  const rec = (x: number) => `${n(x)} records/s`;
  return [
    [
      `load, daybook (${n(l.enterprises)} enterprises + ${n(l.productRecords)} products)`,
      `${rec(l.daybook.recordsPerSecond)} (enterprises ${n(l.daybook.enterprisesPerSecond)}/s, products ${n(l.daybook.productsPerSecond)}/s; ${n(l.rowsWritten)} rows)`,
      '',
      '',
    ],
    [`load, COPY of the same rows`, `${rec(l.copy.recordsPerSecond)} (${l.copy.seconds} s)`, '', ''],
    [
      `load, naive drizzle insert per row`,
      `${rec(l.naive.recordsPerSecond)} (sample of ${n(l.naive.sampleRecords)} records, ${n(l.naive.sampleRows)} rows)`,
      '',
      '',
    ],
    ['load, daybook / COPY', l.ratios.daybookVsCopy.toFixed(2), '>= 0.5', yes(l.ratios.daybookVsCopy >= 0.5)],
    [
      'load, daybook / naive',
      l.ratios.daybookVsNaive.toFixed(1),
      '>= 10',
      yes(l.ratios.daybookVsNaive >= 10),
    ],
    ['load, second pass (no change)', rec(l.noChange.recordsPerSecond), '', ''],
    [
      `load, third pass (${n(l.twoPercentChanged.enterprisesChanged)} enterprises changed)`,
      `${rec(l.twoPercentChanged.recordsPerSecond)} (${n(l.twoPercentChanged.changesWritten)} changes)`,
      '',
      '',
    ],
  ];
}

function memoryLines(m: MemoryResult): Line[] {
  return [
    [
      `memory, 1 worker, ${n(m.entries)} entries`,
      `peak RSS ${m.peakRssMiB} MiB${m.idleRssMiB ? ` (idle ${m.idleRssMiB})` : ''}; ${m.jobsPerSecond} jobs/s`,
      '< 200 MiB',
      yes(m.met),
    ],
  ];
}

function plannerLines(p: PlannerResult): Line[] {
  return [
    [
      `planner, ${n(p.entries)} watch entries`,
      `${p.planMs} ms (read ${p.readMs} + plan ${p.decideMs}); whole plan job ${n(Math.round(p.planJobMs))} ms`,
      '< 1000 ms',
      yes(p.met),
    ],
    ...(p.replan
      ? [
          [
            `planner, plan job whose model moved, ${n(p.replan.read)} refreshed entries`,
            `${n(p.replan.ms)} ms: every entry planned again, ${n(p.replan.written)} written`,
            '',
            '',
          ] as Line,
        ]
      : []),
  ];
}

function diffLines(d: DiffResult): Line[] {
  return [
    [
      `diff, ${n(d.children)} children, all changed`,
      `${d.bestMs} ms (${n(d.changes)} changes)`,
      '< 100 ms',
      yes(d.met),
    ],
  ];
}

function cliLines(c: CliResult): Line[] {
  return [
    [
      `commands, ${n(c.watchEntries)} watch entries (median of ${c.repeats ?? 5})`,
      Object.entries(c.medianMs)
        .map(([k, v]) => `${k} ${v} ms`)
        .join('; '),
      c.target,
      yes(c.met),
    ],
  ];
}

function deliveryLines(d: DeliveryResult): Line[] {
  return d.runs.map((r) =>
    r.mode === 'burst'
      ? [
          `webhooks, burst of ${n(r.events)} events to ${r.endpoints} endpoint${r.endpoints === 1 ? '' : 's'}`,
          `${n(r.deliveries)} in ${r.seconds} s: ${n(r.perSecond)}/s (p99 ${n(r.p99Ms)} ms: the queue draining)`,
          `≥ ${n(BURST_PER_SECOND)}/s`,
          yes(r.perSecond >= BURST_PER_SECOND),
        ]
      : [
          `webhooks, ${n(r.events)} events written at ${r.perSecondWritten}/s to ${r.endpoints} endpoint${r.endpoints === 1 ? '' : 's'}`,
          `p50 ${n(r.p50Ms)} ms, p99 ${n(r.p99Ms)} ms from the write to the 2xx; ${n(r.deliveries)} delivered`,
          `p99 < ${steadyP99Ms(r.endpoints)} ms`,
          yes(r.p99Ms < steadyP99Ms(r.endpoints)),
        ],
  );
}

function exportLines(e: ExportResult): Line[] {
  const rate = (x: number) => `${n(x)} rows/s`;
  const mib = (b: number) => `${(b / 1024 ** 2).toFixed(1)} MiB`;
  const lines: Line[] = [
    [
      `export, baseline: COPY of the same selects (${n(e.rows)} rows)`,
      `${rate(e.baseline.rowsPerSecond)} (${e.baseline.seconds} s, psql to /dev/null; best of ${e.baseline.allSeconds.length}, each export best of ${e.repeats})`,
      '',
      '',
    ],
  ];
  for (const f of e.formats)
    lines.push([
      `export, full package, ${f.format}`,
      `${rate(f.rowsPerSecond)} = ${f.vsBaseline.toFixed(2)} x baseline (${f.seconds} s, ${mib(f.bytes)}, peak RSS ${f.peakRssMiB} MiB${f.inProcess ? `; in the benchmark's own process ${f.inProcess.peakRssMiB} MiB` : ''})`,
      f.goal === null ? '<= 400 MiB peak RSS' : `>= ${f.goal} x baseline, <= 400 MiB peak RSS`,
      yes(f.met !== false && f.rssMet !== false),
    ]);
  if (e.profile) {
    const p = e.profile;
    lines.push([
      'export, where the time goes (s, all tables)',
      `COPY select ${p.copySelectSeconds}; COPY to_json ${p.copyToJsonSeconds}; COPY csv ${p.copyCsvSeconds}; writeNdjson ${p.writeNdjsonSeconds}; writeCsv ${p.writeCsvSeconds}; DuckDB ${p.duckdbSeconds}`,
      '',
      '',
    ]);
  }
  return lines;
}

function refreshLines(r: RefreshResult): Line[] {
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  const lines: Line[] = [
    [
      `refresh backtest: ${n(r.firms)} firms, ${r.scoredDays} days scored (+${r.days - r.scoredDays}), seeds ${r.seeds.join(', ')}`,
      'per family and budget: mean lag of new as a multiple of round robin (rr): worst seed, mean over seeds; bayes (worst seed) and oracle; p95 lag new vs rr and detected new vs rr (each seed, a/b/c)',
      '',
      '',
    ],
  ];
  for (const w of r.families) {
    const ws = r.worlds.filter((x) => x.family === w.family);
    const top = ws.map((x) => pct(x.top10Share)).join('/');
    const m = ws[0]?.runs.find((f) => f.policy === 'new' && f.budgetShare === 0.25)?.model;
    lines.push([
      `refresh, ${w.family}`,
      `${w.about}; top 10% make ${top} of the changes${m ? `; learned at 25%: shape ${m.shape}, equal ${m.equal}, dates ×${m.datedWeight}, hot ×${m.hot}` : ''}`,
      '',
      '',
    ]);
    for (const row of r.table.filter((x) => x.family === w.family)) {
      // p95 lag and detected share of every seed, in seed order (a/b/c).
      const perSeed = (policy: 'new' | 'rr', figure: 'p95Lag' | 'detectedShare') =>
        ws
          .map((x) => {
            const f = x.runs.find((p) => p.policy === policy && p.budgetShare === row.budgetShare);
            if (f === undefined) return '?';
            return figure === 'p95Lag' ? String(f.p95Lag) : (f.detectedShare * 100).toFixed(1);
          })
          .join('/');
      const ab = row.ablation;
      const abl = (['legacy', '+shape', '+dates', '+hot', '+equal', '+shift', 'new'] as const)
        .filter((p) => ab[p] !== undefined)
        .map((p) => `${p} ${(ab[p] as number).toFixed(2)}`)
        .join(', ');
      lines.push([
        `refresh, ${w.family}, ${pct(row.budgetShare)}`,
        `lag ${row.lagRatioWorst.toFixed(2)}× rr (mean ${row.lagRatioMean.toFixed(2)}×, bayes ${row.bayesRatioWorst.toFixed(2)}×, oracle ${row.oracleRatioMean.toFixed(2)}×); p95 ${perSeed('new', 'p95Lag')} vs ${perSeed('rr', 'p95Lag')} d; detected ${perSeed('new', 'detectedShare')}% vs ${perSeed('rr', 'detectedShare')}%; max stale ${row.maxStaleness} d${abl ? `; ablation: ${abl}` : ''}`,
        row.goals.join(', '),
        yes(row.met),
      ]);
    }
  }
  return lines;
}

function soakLines(r: SoakResult): Line[] {
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  const mib = (b: number) => `${(b / 1024 ** 2).toFixed(0)} MiB`;
  const run = (x: SoakRun): Line[] => {
    const name = x.landing === 'deduplicated' ? 'soak' : "soak, baseline (today's landing)";
    const cyclesOf = x.cyclesRun;
    const sizes = cyclesOf.filter((_, i) => i === 0 || (i + 1) % 5 === 0 || i === cyclesOf.length - 1);
    return [
      [
        `${name}: ${n(x.firms)} firms x ${x.cycles} cycles`,
        `${n(x.fetches)} fetches measured (${x.window.from}..${x.window.to}${x.window.steady ? ', steady state' : ''}), ${n(x.changedFetches)} changed; ${x.meanCycleSeconds} s per cycle`,
        '',
        '',
      ],
      [
        `${name}: bytes per enterprise-day`,
        `unchanged ${n(x.unchangedBytesPerDay)}; changed ${n(x.unchangedBytesPerDay + x.changedExtraBytesPerDay)}; all ${n(x.bytesPerDay)}`,
        x.landing === 'deduplicated' ? '<= 300 unchanged' : '',
        x.landing === 'deduplicated' ? yes(x.unchangedBytesPerDay <= 600) : '',
      ],
      [
        `${name}: where an unchanged day goes (B)`,
        x.byTable
          .filter((t) => !t.perChange && t.bytesPerFetch >= 1)
          .slice(0, 6)
          .map((t) => `${t.table} ${Math.round(t.bytesPerFetch)}`)
          .join(', '),
        '',
        '',
      ],
      ...(x.byRelation && x.landing === 'deduplicated'
        ? [
            [
              `${name}: the same by heap and index (B)`,
              x.byRelation
                .filter((r) => Math.abs(r.bytesPerFetch) >= 1)
                .slice(0, 10)
                .map((r) => `${r.relation} ${Math.round(r.bytesPerFetch)}`)
                .join(', '),
              '',
              '',
            ] as Line,
          ]
        : []),
      [
        `${name}: database size after cycles`,
        sizes.map((c) => `${c.cycle.slice(5)} ${mib(c.databaseBytes)}`).join(', '),
        '',
        '',
      ],
    ];
  };
  return [
    ...run(r.run),
    ...r.queries.map(
      (q): Line => [
        `soak: ${q.query}`,
        `${q.ms} ms${q.note ? ` (${q.note})` : ''}`,
        `< ${n(q.boundMs)} ms`,
        yes(q.met),
      ],
    ),
    ...run(r.baseline),
    ['soak: unchanged enterprise-day, baseline / now', `${r.ratio}x`, '', ''],
    [
      'soak: one year at 100,000 companies (projected)',
      `${gib(r.projection.bytes)} (today's landing: ${gib(r.projection.baselineBytes)})`,
      '',
      '',
    ],
  ];
}

function consoleLines(r: ConsoleResult): Line[] {
  return r.runs.flatMap((run) => [
    ...Object.entries(run.pagesMs).map(
      ([page, ms]): Line => [
        `console, ${n(run.companies)} companies x ${n(run.days)} days: ${page}`,
        `${ms} ms (median of ${r.repeats})`,
        `< ${r.targetMs} ms`,
        yes(ms < r.targetMs),
      ],
    ),
    // Results written before the related-party queries existed have none.
    ...Object.entries(run.linksMs ?? {}).map(
      ([query, ms]): Line => [
        `related parties, ${n(run.companies)} companies x ${n(run.days)} days: ${query}`,
        `${ms} ms (median of ${r.repeats})`,
        `< ${r.linksTargetMs} ms`,
        yes(ms < r.linksTargetMs),
      ],
    ),
  ]);
}

const PART_LINES: Record<string, (x: never) => Line[]> = {
  rate: rateLines,
  credit: creditLines,
  load: loadLines,
  memory: memoryLines,
  planner: plannerLines,
  diff: diffLines,
  cli: cliLines,
  delivery: deliveryLines,
  export: exportLines,
  refresh: refreshLines,
  console: consoleLines,
  soak: soakLines,
};

/** The parts, in the order of the table. */
export const TABLE_PARTS: readonly string[] = Object.keys(PART_LINES);

/** The table's lines of one part of results.json; a part that failed is one line saying so. */
export function partLines(part: string, result: unknown): Line[] {
  const fn = PART_LINES[part];
  if (!fn) throw new Error(`bench: no table lines for the part "${part}"`);
  const r = result as { error?: string };
  if (r.error) return [[part, `failed: ${r.error.split('\n')[0]}`, '', 'ERROR']];
  return fn(result as never);
}

export function renderTable(doc: Document): string {
  const lines: Line[] = [];
  for (const part of TABLE_PARTS) if (doc.parts[part]) lines.push(...partLines(part, doc.parts[part]));
  const header: Line = ['figure', 'value', 'target', ''];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...[header, ...lines].map((l) => l[i as 0].length)));
  const fmt = (l: Line) =>
    l
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const m = doc.machine;
  return [
    fmt(header),
    ...lines.map(fmt),
    '',
    `machine: ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}; Node ${m.node}, PostgreSQL ${m.postgres}, Redis ${m.redis}`,
  ].join('\n');
}
