/**
 * Fault injection for the simulator. A spec such as
 * `latency=0.2@50-400,500=0.02,reset=0.01,timeout=0.005,html=0.01,truncated=0.01,trickle=0.01,late=0.01@60000,error200=0.01,drift=0.1`
 * gives each fault kind a probability per request. Decisions are deterministic: they are drawn
 * from the seed, the operation, the request parameters and how many times those parameters were
 * asked before, so the same run of requests meets the same faults whatever their interleaving.
 */
import type { Rng } from './rng.ts';

export const FAULT_KINDS = [
  'latency',
  '500',
  '502',
  '503',
  'reset',
  'timeout',
  'html',
  'truncated',
  'trickle',
  'late',
  'error200',
  'drift',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The gateway-level faults, answered before the service runs: never billed. */
export const GATEWAY_FAULTS = ['500', '502', '503', 'reset', 'timeout', 'html', 'error200'] as const;
export type GatewayFault = (typeof GATEWAY_FAULTS)[number];

export interface FaultSpec {
  /** Probability per request of each kind (0 when absent). */
  rates: Partial<Record<FaultKind, number>>;
  /** Added latency range in ms when latency strikes. */
  latencyMs: [number, number];
  /**
   * How long a `late` answer is held back after billing, in ms (DEFAULT_LATE_MS when absent):
   * longer than the client's timeout (DAYBOOK_HTTP_TIMEOUT_MS) for the client to give up first.
   */
  lateMs?: number;
}

/**
 * The hold of a `late` answer when the spec gives none: longer than daybook's default request
 * timeout (DAYBOOK_HTTP_TIMEOUT_MS, 30 s), so a client with that timeout never sees the answer.
 */
export const DEFAULT_LATE_MS = 60_000;

export const NO_FAULTS: FaultSpec = { rates: {}, latencyMs: [0, 0] };

export class FaultSpecError extends Error {
  override readonly name = 'FaultSpecError';
}

/** Parses a fault spec; throws FaultSpecError naming the bad part. An empty string means none. */
export function parseFaultSpec(spec: string): FaultSpec {
  const rates: Partial<Record<FaultKind, number>> = {};
  let latencyMs: [number, number] = [100, 1000];
  let lateMs: number | undefined;
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9]+)(?:[=:]([0-9.]+))?(?:@(\d+)(?:-(\d+))?)?$/.exec(part);
    if (!m) throw new FaultSpecError(`fault "${part}" is not KIND[=PROBABILITY][@MIN-MAX]`);
    const kind = m[1] as FaultKind;
    if (!FAULT_KINDS.includes(kind)) {
      throw new FaultSpecError(`unknown fault kind "${m[1]}"; known kinds: ${FAULT_KINDS.join(', ')}`);
    }
    const p = m[2] === undefined ? 1 : Number(m[2]);
    if (!(p >= 0 && p <= 1)) throw new FaultSpecError(`fault "${part}": probability must be from 0 to 1`);
    rates[kind] = p;
    if (m[3] !== undefined && kind === 'late') {
      if (m[4] !== undefined) throw new FaultSpecError(`fault "${part}": late takes one delay, @MS`);
      lateMs = Number(m[3]);
    } else if (m[3] !== undefined) {
      if (kind !== 'latency')
        throw new FaultSpecError(`fault "${part}": only latency takes @MIN-MAX (and late @MS)`);
      const lo = Number(m[3]);
      const hi = m[4] === undefined ? lo : Number(m[4]);
      if (hi < lo) throw new FaultSpecError(`fault "${part}": MAX is below MIN`);
      latencyMs = [lo, hi];
    }
  }
  const gatewayTotal = GATEWAY_FAULTS.reduce((s, k) => s + (rates[k] ?? 0), 0);
  if (gatewayTotal > 1) throw new FaultSpecError('the failure probabilities add up to more than 1');
  return lateMs === undefined ? { rates, latencyMs } : { rates, latencyMs, lateMs };
}

/** Writes a spec back in its text form (for the state endpoint and start-up line). */
export function formatFaultSpec(spec: FaultSpec): string {
  return Object.entries(spec.rates)
    .filter(([, p]) => (p ?? 0) > 0)
    .map(([k, p]) =>
      k === 'latency'
        ? `${k}=${p}@${spec.latencyMs[0]}-${spec.latencyMs[1]}`
        : k === 'late' && spec.lateMs !== undefined
          ? `${k}=${p}@${spec.lateMs}`
          : `${k}=${p}`,
    )
    .join(',');
}

/** What the simulator does to one request. */
export interface FaultPlan {
  latencyMs: number;
  /** A gateway fault replaces the answer entirely. */
  gateway: GatewayFault | null;
  /** Truncate the (billed) answer in transit. */
  truncate: boolean;
  /**
   * Send the (billed) answer's first bytes, then one byte every ~200 ms until the client goes
   * away: it never completes within any client timeout. Never together with `truncate`.
   */
  trickle: boolean;
  /**
   * Bill the enterprise search, then hold the whole answer back `lateMs` before sending it: a
   * client whose timeout is shorter gets no answer to a billed call. Never with `truncate` or
   * `trickle`; 0 when the request is not late.
   */
  lateMs: number;
  /** Answer with a drifted format. */
  drift: boolean;
  /** Randomness for the drift variants of this request. */
  rng: Rng;
}

/** Decides the faults of one request from its deterministic seed. */
export function planFaults(spec: FaultSpec, rng: Rng): FaultPlan {
  const r = spec.rates;
  const latency = rng.chance(r.latency ?? 0) ? rng.int(spec.latencyMs[0], spec.latencyMs[1]) : 0;
  let gateway: GatewayFault | null = null;
  let roll = rng.next();
  for (const kind of GATEWAY_FAULTS) {
    roll -= r[kind] ?? 0;
    if (roll < 0) {
      gateway = kind;
      break;
    }
  }
  const truncate = gateway === null && rng.chance(r.truncated ?? 0);
  const drift = rng.chance(r.drift ?? 0);
  // Drawn last, and only when asked for: a spec without it meets the same faults as before.
  const trickle = gateway === null && !truncate && (r.trickle ?? 0) > 0 && rng.chance(r.trickle ?? 0);
  // After trickle, likewise: a spec without `late` meets the same faults as before it existed.
  const late = gateway === null && !truncate && !trickle && (r.late ?? 0) > 0 && rng.chance(r.late ?? 0);
  const lateMs = late ? (spec.lateMs ?? DEFAULT_LATE_MS) : 0;
  return { latencyMs: latency, gateway, truncate, trickle, lateMs, drift, rng };
}

const DROPPABLE_ENTERPRISE_FIELDS = [
  'HISTORYNAME',
  'REVOKEDATE',
  'REVOKEREASON',
  'SCONFORM',
  'participants',
  'industry_middle',
  'LEGALPERSONDESC',
  'APPRDATE',
];

/**
 * Format drift on an enterprise record: extra fields, missing optional fields, REGCAP as a
 * string, OPTO as text, dates without Z or milliseconds. Returns a new object.
 */
export function driftEnterprise(content: Record<string, unknown>, rng: Rng): Record<string, unknown> {
  const out: Record<string, unknown> = { ...content };
  const variants = rng.sample(
    ['extra', 'missing', 'regcapString', 'optoText', 'datesNoZ', 'datesNoMs'],
    rng.int(1, 3),
  );
  for (const v of variants) {
    switch (v) {
      case 'extra':
        out.ENTNAME_EN = `${String(out.ENTNAME ?? '').length > 0 ? 'Co.' : ''} Ltd.`;
        out.TAXPAYER_QUALIFICATION = rng.pick(['一般纳税人', '小规模纳税人']);
        out.CONTACT = { phone: `0${rng.int(10, 999)}-${rng.int(1000000, 9999999)}`, email: null };
        break;
      case 'missing':
        for (const f of rng.sample(DROPPABLE_ENTERPRISE_FIELDS, rng.int(1, 3))) delete out[f];
        break;
      case 'regcapString':
        if (typeof out.REGCAP === 'number') out.REGCAP = out.REGCAP.toFixed(6);
        break;
      case 'optoText':
        out.OPTO = rng.pick(['长期', 'Long-term', 'Perpetual', '永久']);
        break;
      case 'datesNoZ':
        for (const f of ['ESDATE', 'OPFROM', 'APPRDATE']) {
          if (typeof out[f] === 'string') out[f] = (out[f] as string).replace(/Z$/, '');
        }
        break;
      case 'datesNoMs':
        for (const f of ['ESDATE', 'OPFROM', 'APPRDATE']) {
          if (typeof out[f] === 'string') out[f] = (out[f] as string).replace(/\.\d{3}(?=Z?$)/, '');
        }
        break;
    }
  }
  return out;
}

/**
 * Format drift on the billing block of an enterprise answer, seen on real providers: the amount
 * as a numeric string, or no `usage` at all. The answer is billed all the same.
 */
export function driftUsage(usage: { credits: number; remark: string }, rng: Rng): unknown {
  const v = rng.pick(['creditsString', 'usageMissing', 'none', 'none']);
  if (v === 'creditsString') return { ...usage, credits: String(usage.credits) };
  if (v === 'usageMissing') return undefined;
  return usage;
}

/** Format drift on a product object: extra fields, missing optional fields, counts as strings. */
export function driftProduct(product: Record<string, unknown>, rng: Rng): Record<string, unknown> {
  const out: Record<string, unknown> = { ...product };
  for (const v of rng.sample(['extra', 'missing', 'countsAsText'], rng.int(1, 2))) {
    switch (v) {
      case 'extra':
        out.slug = String(out.name ?? '')
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-');
        out.reviews_rating = rng.int(30, 50) / 10;
        break;
      case 'missing':
        for (const f of rng.sample(
          ['description', 'thumbnail', 'product_links', 'featured_at'],
          rng.int(1, 2),
        )) {
          delete out[f];
        }
        break;
      case 'countsAsText':
        out.votes_count = String(out.votes_count);
        break;
    }
  }
  return out;
}
