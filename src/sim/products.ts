/**
 * The simulator's product world: one trending list per Pacific day, deterministic from the seed.
 * Everything about a product is fixed when its day is planned; only votes, comment counts, the
 * visible comments and updated_at move with `now`, along a saturating curve from launch.
 */
import { addDays, daysBetween, isCalendarDate, pacificDate, pacificDayStart } from '../time/cycles.ts';
import { hash32, type Rng, rngFor } from './rng.ts';
import type { SimComment, SimMedia, SimProduct } from './types.ts';

/** Topic names, as docs/registry.md lists them. */
export const PRODUCT_TOPICS = [
  'Artificial Intelligence',
  'Productivity',
  'Developer Tools',
  'Open Source',
  'User Experience',
  'GitHub',
  'Business',
  'Design Tools',
  'Marketing',
  'SaaS',
] as const;

/** Slots reserved per day; ids and names are derived from day × MAX_PER_DAY + slot. */
const MAX_PER_DAY = 50;
/** Median final votes by rank (docs/registry.md, 2025); ranks between knots are interpolated in log space. */
const RANK_KNOTS: readonly (readonly [number, number])[] = [
  [1, 516],
  [2, 407],
  [3, 328],
  [5, 234],
  [10, 132],
  [20, 27],
  [30, 12],
];
const WEEKEND_FACTOR = 0.6;
const FRACTION_AT_DAY_END = 0.85;
/** Votes stop creeping up this many days after the launch day ends. */
const CREEP_DAYS = 13;
const MAX_VISIBLE_COMMENTS = 5;
const HOUR_MS = 3600_000;

// One word each, split on spaces: the lists are long and only ever read whole.
const PREFIXES: readonly string[] = (
  'Nova Flow Pixel Sync Bright Echo Quill Orbit Lumen Vector Relay Spark Atlas Cobalt Drift Ember Fable ' +
  'Glide Harbor Juniper Kite Lattice Mosaic Nimbus Onyx Prism Quartz Ripple Sage Tandem Umbra Willow ' +
  'Zenith Beacon Cascade Dune Fern Granite Helix Inkwell Jolt Keystone Lark Meadow Nectar Pulse Quest ' +
  'Rover Summit Tidal Verve Wisp Yonder Zephyr Cinder Fathom Gist Hue Loop Mint Nook Rune Thread Vibe ' +
  'Aurora Basil Clover Delta Falcon Garnet Indigo Jasper Kepler Lotus Maple Neon Opal Pebble Quanta ' +
  'Raven Sierra Topaz Velvet Wren Axiom Blink Crisp Dapper Flint Gusto Hatch Lucid Mellow Noble Pivot ' +
  'Radiant Swift Tango Vivid Zest'
).split(' ');
const ROOTS: readonly string[] = (
  'Desk Base Mind Stack Forge Board Pilot Note Flow Lab Craft Scope Sense Works Mail Deck Docs Metrics ' +
  'Ops Form Page Cast Chat Grid Path Sheet Track Wave Bot Byte Cloud Code Dash Frame Hive Ink Layer ' +
  'Link Logic Map Mesh Nest Point Port Post Queue Shelf Signal Sketch Space Studio Sync Tab Tune Verse ' +
  'View Vault Ware Wire Yard'
).split(' ');
/** Appended once every base name has been used, one per further round. */
const ROUND_TRAILERS = [' AI', ' Pro', ' Labs', ' HQ', ' Kit', ' OS', ' Go', ' Plus', ' One', ' X'] as const;

const INPUTS = [
  'meeting recordings',
  'customer feedback',
  'messy spreadsheets',
  'Figma files',
  'support tickets',
  'voice notes',
  'PDFs',
  'screenshots',
  'product specs',
  'sales calls',
  'GitHub issues',
  'blog posts',
] as const;
const OUTPUTS = [
  'action items',
  'polished docs',
  'working code',
  'dashboards',
  'landing pages',
  'release notes',
  'short videos',
  'SQL queries',
  'test cases',
  'investor updates',
  'social posts',
  'roadmaps',
] as const;
const AUDIENCES = [
  'remote teams',
  'indie hackers',
  'product managers',
  'designers',
  'developers',
  'sales teams',
  'solo founders',
  'agencies',
  'customer success teams',
  'marketers',
  'recruiters',
  'data teams',
] as const;
const TASKS = [
  'ship side projects',
  'run standups',
  'review pull requests',
  'plan sprints',
  'write docs',
  'track competitors',
  'onboard customers',
  'build internal tools',
  'test APIs',
  'manage feedback',
  'plan content',
  'automate workflows',
] as const;
const ROLES = [
  'copilot',
  'analyst',
  'assistant',
  'researcher',
  'editor',
  'QA engineer',
  'designer',
  'teammate',
];
const DOMAINS = [
  'your inbox',
  'your codebase',
  'customer support',
  'product research',
  'marketing ops',
  'your calendar',
  'hiring',
  'finance teams',
] as const;
const ADJECTIVES = ['fastest', 'simplest', 'calmest', 'smartest', 'most private', 'friendliest'] as const;
const PAINS = [
  'copy-pasting between tabs',
  'endless status meetings',
  'stale documentation',
  'manual data entry',
  'context switching',
  'chasing approvals',
  'broken handoffs',
  'spreadsheet chaos',
] as const;
const TOOLS = ['Slack', 'Notion', 'Linear', 'GitHub', 'Google Drive', 'HubSpot', 'Jira', 'Figma', 'Zapier'];
const FIRST_NAMES = [
  'Maya',
  'Leo',
  'Priya',
  'Sam',
  'Jonas',
  'Aiko',
  'Diego',
  'Nora',
  'Tomás',
  'Zoe',
  'Arjun',
];

type Details = Pick<
  SimProduct,
  'tagline' | 'description' | 'topics' | 'media' | 'thumbnail' | 'product_links'
>;

/** A product as planned for its day: everything except the fields that move with `now`. */
interface Plan {
  date: string;
  slot: number;
  base: Pick<SimProduct, 'id' | 'product_id' | 'name' | 'url' | 'created_at' | 'featured_at'>;
  /** Made on first use: indexing a year of names for `find` should not pay for media and copy. */
  details?: Details;
  createdMs: number;
  featuredMs: number;
  curve: Curve;
  commentCurve: Curve;
  finalVotes: number;
  finalComments: number;
}

/** Where a Pacific day sits: its date, its index from the epoch and its bounds. */
interface DayFrame {
  date: string;
  index: number;
  startMs: number;
  endMs: number;
}

/** A saturating growth curve: hours since featuring → fraction of the final count. */
interface Curve {
  /** Hours from featuring to the end of the launch day (DST days are 23 or 25 hours long). */
  dayEndH: number;
  tauH: number;
  creepTauH: number;
}

/** Fraction of the final count reached `h` hours after featuring; monotonic, 1 after the creep. */
function growth(c: Curve, h: number): number {
  if (h <= 0) return 0;
  if (h <= c.dayEndH) {
    return (FRACTION_AT_DAY_END * -Math.expm1(-h / c.tauH)) / -Math.expm1(-c.dayEndH / c.tauH);
  }
  const creepH = CREEP_DAYS * 24;
  if (h >= c.dayEndH + creepH) return 1;
  const rest = -Math.expm1(-(h - c.dayEndH) / c.creepTauH) / -Math.expm1(-creepH / c.creepTauH);
  return FRACTION_AT_DAY_END + (1 - FRACTION_AT_DAY_END) * rest;
}

/** Hours after featuring at which `growth` reaches `y` (0 < y < 1). */
function growthInverse(c: Curve, y: number): number {
  if (y <= FRACTION_AT_DAY_END) {
    return -c.tauH * Math.log1p((y / FRACTION_AT_DAY_END) * Math.expm1(-c.dayEndH / c.tauH));
  }
  const creepH = CREEP_DAYS * 24;
  const rest = (y - FRACTION_AT_DAY_END) / (1 - FRACTION_AT_DAY_END);
  return c.dayEndH - c.creepTauH * Math.log1p(rest * Math.expm1(-creepH / c.creepTauH));
}

/** Median final votes of `rank` on an ordinary weekday. */
function medianVotes(rank: number): number {
  for (let i = 1; i < RANK_KNOTS.length; i++) {
    const [r1, v1] = RANK_KNOTS[i] as readonly [number, number];
    const [r0, v0] = RANK_KNOTS[i - 1] as readonly [number, number];
    if (rank <= r1 || i === RANK_KNOTS.length - 1) {
      // Beyond the last knot the last segment's slope carries on.
      return Math.exp(Math.log(v0) + ((rank - r0) / (r1 - r0)) * (Math.log(v1) - Math.log(v0)));
    }
  }
  return 1;
}

/** A standard normal deviate (Box–Muller). */
function normal(rng: Rng): number {
  const u = 1 - rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

function uniform(rng: Rng, min: number, max: number): number {
  return min + rng.next() * (max - min);
}

function isWeekend(date: string): boolean {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 || day === 6;
}

/** YYYY-MM-DDTHH:MM:SS in UTC, no zone. */
function localStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

function hex(rng: Rng, n: number): string {
  let s = '';
  while (s.length < n) {
    const word = Math.floor(rng.next() * 0x100000000);
    s += word.toString(16).padStart(8, '0');
  }
  return s.slice(0, n);
}

function token(rng: Rng, n: number, alphabet: string): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet.charAt(rng.int(0, alphabet.length - 1));
  return s;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A seeded bijection of [0, size): a 4-round Feistel network over the next even power of two,
 * cycle-walked back into range. It lets names be unique without remembering which were used.
 */
function permute(x: number, size: number, key: string): number {
  let bits = 2;
  while (2 ** bits < size) bits += 2;
  const half = bits / 2;
  const mask = 2 ** half - 1;
  let v = x;
  do {
    let left = v >>> half;
    let right = v & mask;
    for (let round = 0; round < 4; round++) {
      const next = (left ^ hash32(`${key}|${round}|${right}`)) & mask;
      left = right;
      right = next;
    }
    v = left * 2 ** half + right;
  } while (v >= size);
  return v;
}

/** The world-unique name of global slot `g`. */
function nameOf(seed: number, g: number): string {
  const space = PREFIXES.length * ROOTS.length;
  const round = Math.floor(g / space);
  const idx = permute(g % space, space, `${seed}|names|${round}`);
  const prefix = PREFIXES[idx % PREFIXES.length] as string;
  const root = ROOTS[Math.floor(idx / PREFIXES.length)] as string;
  // The form is fixed per pair so a pair never shows up both joined and spaced.
  const joined = hash32(`${prefix}${root}`) % 3 !== 0;
  const base = prefix === root ? `${prefix}ly` : joined ? `${prefix}${root}` : `${prefix} ${root}`;
  if (round === 0) return base;
  const trailer = ROUND_TRAILERS[round - 1];
  return trailer ? `${base}${trailer}` : `${base} ${round - ROUND_TRAILERS.length + 1}`;
}

function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function taglineFor(rng: Rng): string {
  switch (rng.int(0, 5)) {
    case 0:
      return `Turn ${rng.pick(INPUTS)} into ${rng.pick(OUTPUTS)} with AI`;
    case 1:
      return `The ${rng.pick(ADJECTIVES)} way to ${rng.pick(TASKS)}`;
    case 2:
      return `Your AI ${rng.pick(ROLES)} for ${rng.pick(DOMAINS)}`;
    case 3:
      return `${capitalise(rng.pick(OUTPUTS))} for ${rng.pick(AUDIENCES)}, generated in seconds`;
    case 4:
      return `Open-source toolkit to ${rng.pick(TASKS)}`;
    default:
      return `Help ${rng.pick(AUDIENCES)} ${rng.pick(TASKS)} without ${rng.pick(PAINS)}`;
  }
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function descriptionFor(rng: Rng, name: string): string {
  const [toolA, toolB] = rng.sample(TOOLS, 2);
  const sentences = [
    `${name} helps ${rng.pick(AUDIENCES)} ${rng.pick(TASKS)} without ${rng.pick(PAINS)}.`,
    `Connect ${toolA} and ${toolB}, and it turns ${rng.pick(INPUTS)} into ${rng.pick(OUTPUTS)} automatically.`,
    rng.pick([
      'Free for individuals, with paid plans for teams.',
      'Your data stays yours: everything is encrypted at rest and never used for training.',
      'Set up takes under five minutes and needs no credit card.',
      'Built by a team of three who were tired of doing it by hand.',
    ]),
  ];
  return sentences.slice(0, rng.int(1, 3)).join(' ');
}

function topicsFor(rng: Rng): string[] {
  const n = rng.weighted<number>([
    [1, 2],
    [2, 4],
    [3, 3],
    [4, 1],
  ]);
  const picked = rng.sample(PRODUCT_TOPICS, n);
  // Most launches carry the AI topic; keep that realistic without making it universal.
  if (!picked.includes('Artificial Intelligence') && rng.chance(0.45)) picked[0] = 'Artificial Intelligence';
  return picked;
}

function imageUrl(rng: Rng, ext: string): string {
  return `https://ph-files.imgix.net/${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-a${hex(rng, 3)}-${hex(rng, 12)}.${ext}`;
}

function mediaFor(rng: Rng): SimMedia[] {
  const n = rng.int(1, 5);
  const media: SimMedia[] = [];
  for (let i = 0; i < n; i++) {
    if (i === 0 && rng.chance(0.35)) {
      const videoUrl = rng.chance(0.7)
        ? `https://www.youtube.com/watch?v=${token(rng, 11, `${ALNUM}-_`)}`
        : `https://www.loom.com/share/${hex(rng, 32)}`;
      media.push({ url: imageUrl(rng, 'jpeg'), type: 'video', videoUrl });
    } else if (rng.chance(0.04)) {
      media.push({
        url: `https://app.arcade.software/share/${token(rng, 20, ALNUM)}`,
        type: 'interactive_demo',
        videoUrl: null,
      });
    } else {
      media.push({
        url: imageUrl(rng, rng.pick(['png', 'png', 'jpeg', 'gif'])),
        type: 'image',
        videoUrl: null,
      });
    }
  }
  return media;
}

function linksFor(rng: Rng, slug: string, topics: string[]): { url: string; type: string }[] {
  const host = `${slug.replace(/-/g, '')}${rng.pick(['.com', '.ai', '.io', '.app', '.so', '.dev'])}`;
  const links = [
    { url: `https://${rng.chance(0.5) ? 'www.' : ''}${host}/?ref=producthunt`, type: 'Website' },
  ];
  const extras: { url: string; type: string }[] = [];
  if (rng.chance(0.25)) {
    extras.push({
      url: `https://chromewebstore.google.com/detail/${slug}/${token(rng, 32, 'abcdefghijklmnop')}`,
      type: 'Chrome',
    });
  }
  if (rng.chance(0.1))
    extras.push({ url: `https://apps.apple.com/app/${slug}/id${rng.int(1e9, 7e9 - 1)}`, type: 'App Store' });
  if (rng.chance(0.07)) {
    extras.push({
      url: `https://play.google.com/store/apps/details?id=com.${slug.replace(/-/g, '')}.app`,
      type: 'Play Store',
    });
  }
  if (rng.chance(topics.includes('Open Source') || topics.includes('GitHub') ? 0.6 : 0.05)) {
    extras.push({ url: `https://github.com/${slug}/${slug}`, type: 'GitHub' });
  }
  return [...links, ...extras.slice(0, 2)];
}

/** The body of comment `k` (0 is the maker's opening comment). */
function commentBody(rng: Rng, k: number, name: string, website: string): string {
  if (k === 0) {
    const who = rng.pick(FIRST_NAMES);
    const parts = [
      `Hey Product Hunt! 👋 I'm ${who}, one of the makers of **${name}**.`,
      `We built it because we kept losing hours to ${rng.pick(PAINS)}, and nothing out there fixed it for ${rng.pick(AUDIENCES)}.`,
      `Today it connects to ${rng.pick(TOOLS)} and ${rng.pick(TOOLS)}, and we are shipping new integrations every week.`,
      `Try it free at [${website.replace(/^https:\/\/(www\.)?|\/\?ref=producthunt$/g, '')}](${website}) and tell us what to build next!`,
    ];
    const n = rng.int(2, 4);
    const chosen = parts.slice(0, n);
    return rng.chance(0.6)
      ? `${chosen.slice(0, 1).join(' ')}\n\n${chosen.slice(1).join(' ')}`
      : chosen.join(' ');
  }
  const pool = [
    'Congrats on the launch! 🎉',
    'This looks super useful for our team.',
    `How does it handle ${rng.pick(['large workspaces', 'permissions', 'offline mode', 'non-English content'])}?`,
    'Love the onboarding flow, it took me under a minute to get started.',
    'Is there an API or a Zapier integration on the roadmap?',
    `We have used the beta for a month and it **saved us hours** every week on ${rng.pick(TASKS).replace(/^\w+ /, '')}.`,
    'Pricing looks fair for small teams.',
    `Does it work with ${rng.pick(TOOLS)}?`,
    'Upvoted! Curious how you compare to the incumbents in this space.',
    'The UI is really clean, great job on the details.',
    "What's your data retention policy, and can we self-host it?",
    `Wrote up my first impressions here: [review](https://medium.com/@${slugOf(rng.pick(FIRST_NAMES))}/first-look-${slugOf(name)}).`,
    `As someone who has tried to ${rng.pick(TASKS)} with three different tools this year, I can say the ${rng.pick(['search', 'editor', 'sharing', 'templates'])} here is the first one that feels **fast enough** to use every day.`,
  ];
  const sentences = rng.sample(pool, rng.int(1, 4));
  if (sentences.length > 2 && rng.chance(0.4)) {
    return `${sentences.slice(0, 2).join(' ')}\n${sentences.slice(2).join(' ')}`;
  }
  return sentences.join(' ');
}

/** The simulator's deterministic world of daily trending lists. */
export class ProductWorld {
  private readonly seed: number;
  private readonly epoch: string;
  private readonly days = new Map<string, Plan[]>();
  private readonly byName = new Map<string, Plan>();
  /** Every day from the epoch up to this one has been planned (and its names indexed). */
  private plannedThrough: string | null = null;

  constructor(opts: { seed: number; epoch?: string }) {
    const epoch = opts.epoch ?? '2026-01-01';
    if (!isCalendarDate(epoch)) throw new RangeError(`epoch is not a calendar date: ${epoch}`);
    this.seed = opts.seed;
    this.epoch = epoch;
  }

  /** The trending list of Pacific date `date` as seen at `now`, most votes first; empty before the day begins. */
  list(date: string, now: Date): SimProduct[] {
    if (!isCalendarDate(date) || date < this.epoch) return [];
    if (now.getTime() < pacificDayStart(date).getTime()) return [];
    const products = this.plan(date).map((p) => this.snapshot(p, now));
    return products.sort(
      (a, b) => b.votes_count - a.votes_count || Number(a.product_id) - Number(b.product_id),
    );
  }

  /** The product named `name` (trimmed, case-insensitive) launched from the epoch to the Pacific date of `now`. */
  find(name: string, now: Date): SimProduct | undefined {
    const today = pacificDate(now);
    if (today < this.epoch) return undefined;
    let next = this.plannedThrough === null ? this.epoch : addDays(this.plannedThrough, 1);
    while (next <= today) {
      this.plan(next);
      this.plannedThrough = next;
      next = addDays(next, 1);
    }
    const plan = this.byName.get(name.trim().toLowerCase());
    return plan && plan.date <= today ? this.snapshot(plan, now) : undefined;
  }

  /** The static plans of one day, generated once. */
  private plan(date: string): Plan[] {
    const cached = this.days.get(date);
    if (cached) return cached;
    const dayIndex = daysBetween(this.epoch, date);
    const dayRng = rngFor(this.seed, 'products', date);
    const weekend = isWeekend(date);
    const count = weekend ? dayRng.int(10, 30) : dayRng.int(32, 50);
    // A shared day factor makes a whole day busy or quiet, which is what spreads the #1 votes.
    const dayFactor = Math.exp(0.2 * normal(dayRng)) * (weekend ? WEEKEND_FACTOR : 1);
    const finals: number[] = [];
    for (let rank = 1; rank <= count; rank++) {
      finals.push(medianVotes(rank) * dayFactor * Math.exp(0.12 * normal(dayRng)));
    }
    if (dayRng.chance(0.04)) finals[0] = (finals[0] ?? 1) * uniform(dayRng, 1.4, 2.3);
    finals.sort((a, b) => b - a);
    const idOrder = dayRng.sample(
      Array.from({ length: MAX_PER_DAY }, (_, i) => i),
      MAX_PER_DAY,
    );
    const day: DayFrame = {
      date,
      index: dayIndex,
      startMs: pacificDayStart(date).getTime(),
      endMs: pacificDayStart(addDays(date, 1)).getTime(),
    };
    const plans: Plan[] = [];
    for (let slot = 0; slot < count; slot++) {
      const finalVotes = Math.max(1, Math.round(finals[slot] ?? 1));
      const plan = this.planProduct(day, slot, finalVotes, idOrder[slot] ?? slot);
      plans.push(plan);
      this.byName.set(plan.base.name.toLowerCase(), plan);
    }
    this.days.set(date, plans);
    return plans;
  }

  /** The static part of the product in `slot` of `day`; `idSlot` spreads product_ids across the day's range. */
  private planProduct(day: DayFrame, slot: number, finalVotes: number, idSlot: number): Plan {
    const { date, index: dayIndex } = day;
    const rng = rngFor(this.seed, 'product', date, slot);
    const g = dayIndex * MAX_PER_DAY + slot;
    const name = nameOf(this.seed, g);
    const slug = slugOf(name);
    // The first UUID group is a bijection of the global slot, so ids never collide.
    const head = (Math.imul((g ^ hash32(`${this.seed}|uuid`)) >>> 0, 0x9e3779b1) >>> 0)
      .toString(16)
      .padStart(8, '0');
    const id = `${head}-${hex(rng, 4)}-4${hex(rng, 3)}-${rng.pick(['8', '9', 'a', 'b'])}${hex(rng, 3)}-${hex(rng, 12)}`;
    const productId = String(480_000 + dayIndex * 400 + idSlot * 8 + rng.int(0, 7));
    const createdMs = day.startMs + 60_000 + rng.int(0, 50) * 1000;
    const featuredMs = createdMs + rng.int(0, 120) * 1000;
    const dayEndH = (day.endMs - featuredMs) / HOUR_MS;
    const tauH = uniform(rng, 5, 10);
    const curve: Curve = { dayEndH, tauH, creepTauH: uniform(rng, 48, 120) };
    const commentCurve: Curve = { dayEndH, tauH: tauH * uniform(rng, 1, 1.6), creepTauH: curve.creepTauH };
    const base: Plan['base'] = {
      id,
      product_id: productId,
      name,
      url: `https://www.producthunt.com/posts/${slug}`,
      created_at: localStamp(createdMs),
      featured_at: localStamp(featuredMs),
    };
    const finalComments = Math.max(1, Math.round(finalVotes * uniform(rng, 0.08, 0.28)));
    return { date, slot, base, createdMs, featuredMs, curve, commentCurve, finalVotes, finalComments };
  }

  /** The descriptive fields of a planned product, made once from their own random stream. */
  private details(plan: Plan): Details {
    if (plan.details) return plan.details;
    const rng = rngFor(this.seed, 'product-details', plan.date, plan.slot);
    const topics = topicsFor(rng);
    plan.details = {
      tagline: taglineFor(rng),
      description: descriptionFor(rng, plan.base.name),
      topics,
      media: mediaFor(rng),
      thumbnail: { url: imageUrl(rng, rng.chance(0.2) ? 'gif' : 'png'), type: 'image' },
      product_links: linksFor(rng, slugOf(plan.base.name), topics),
    };
    return plan.details;
  }

  /** When comment `k` of `plan` is posted, whole seconds; increasing in k. */
  private commentMs(plan: Plan, k: number): number {
    const jitter = rngFor(this.seed, 'comment-time', plan.date, plan.slot, k).next() * 0.9 + 0.05;
    const h = growthInverse(plan.commentCurve, (k + jitter) / plan.finalComments);
    return plan.featuredMs + Math.ceil((h * HOUR_MS) / 1000) * 1000;
  }

  /** The product as seen at `now`: fresh objects, so callers may mutate them. */
  private snapshot(plan: Plan, now: Date): SimProduct {
    const t = now.getTime();
    const h = (t - plan.featuredMs) / HOUR_MS;
    const votes = Math.floor(plan.finalVotes * growth(plan.curve, h));
    // Comments posted by `now`: the largest k with commentMs(k - 1) <= t, by binary search.
    let lo = 0;
    let hi = plan.finalComments;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.commentMs(plan, mid - 1) <= t) lo = mid;
      else hi = mid - 1;
    }
    const posted = lo;
    const comments: SimComment[] = [];
    for (let k = posted - 1; k >= 0 && comments.length < MAX_VISIBLE_COMMENTS; k--) {
      const rng = rngFor(this.seed, 'comment', plan.date, plan.slot, k);
      const website = this.details(plan).product_links[0]?.url ?? plan.base.url;
      comments.push({
        body: commentBody(rng, k, plan.base.name, website),
        created_at: new Date(this.commentMs(plan, k)).toISOString(),
      });
    }
    const hour = Math.floor(t / HOUR_MS) * HOUR_MS;
    const b = plan.base;
    const d = this.details(plan);
    return {
      id: b.id,
      product_id: b.product_id,
      name: b.name,
      tagline: d.tagline,
      description: d.description,
      url: b.url,
      votes_count: votes,
      comments_count: posted,
      created_at: b.created_at,
      featured_at: b.featured_at,
      topics: [...d.topics],
      media: d.media.map((m) => ({ ...m })),
      thumbnail: { ...d.thumbnail },
      product_links: d.product_links.map((l) => ({ ...l })),
      comments,
      updated_at: localStamp(Math.max(hour, plan.createdMs)),
    };
  }
}
