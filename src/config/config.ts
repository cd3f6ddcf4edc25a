/**
 * daybook's configuration: read from the environment (and an optional .env file) in this one
 * module, validated with zod, frozen and passed down. Each bad value gets a message naming the
 * variable and the problem.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseEnv } from 'node:util';
import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { DEFAULT_SCHEDULE, parseDuration, parseSchedule } from '../retry/schedule.ts';
import { isCalendarDate } from '../time/cycles.ts';
import { parseClusterNodes } from './redis-nodes.ts';

const int = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, {
      message:
        max === Number.MAX_SAFE_INTEGER
          ? `${name} must be at least ${min}`
          : `${name} must be from ${min} to ${max}`,
    });

const url = (name: string, protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      { message: `${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}` },
    );

/**
 * The upstream base URL. daybook appends `/v1/<operation>` itself (src/upstream/client.ts), so a
 * base ending in `/v1` would call `/v1/v1/…`, which no upstream serves: refused, with the base to
 * use instead (its password, if any, masked).
 */
const apiBaseUrl = () =>
  url('DAYBOOK_API_BASE_URL', ['http:', 'https:']).superRefine((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return;
    }
    // Another scheme has its message already.
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !/\/v1\/*$/i.test(u.pathname)) return;
    u.pathname = u.pathname.replace(/\/v1\/*$/i, '') || '/';
    u.search = '';
    u.hash = '';
    if (u.password) u.password = '***';
    const base = u.toString().replace(/\/$/, '');
    ctx.addIssue({
      code: 'custom',
      message: `DAYBOOK_API_BASE_URL ends in /v1, but daybook adds /v1/<operation> to the base itself (this one would call …/v1/v1/product-listing): set it without /v1, to ${base}`,
    });
  });

const cron = (name: string) =>
  z
    .string()
    .trim()
    .refine((v) => validCron(v), { message: `${name} is not a valid cron expression (5 or 6 fields)` });

const timeZone = (name: string) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: v });
          return true;
        } catch {
          return false;
        }
      },
      { message: `${name} is not an IANA time zone (for example Asia/Shanghai)` },
    );

/**
 * A text `parse` reads (a duration, a schedule), its value what `parse` makes of it, `fallback`
 * when unset: refused with `message` when `parse` throws or `ok` refuses what it makes.
 */
const parsed = <T>(parse: (v: string) => T, ok: (value: T) => boolean, message: string, fallback: string) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return ok(parse(v));
        } catch {
          return false;
        }
      },
      { message },
    )
    .default(fallback)
    .transform((v) => parse(v));

/**
 * A comma-separated list, its items trimmed and lowercased and blanks dropped, each of which
 * `valid` takes: a list with none, or with one `valid` refuses, is `refusal` and the items refused.
 */
const commaList = (valid: (item: string) => boolean, refusal: string) =>
  z.string().transform((v, ctx) => {
    const items = v
      .split(',')
      .map((x) => x.trim().toLowerCase())
      .filter((x) => x !== '');
    const bad = items.filter((x) => !valid(x));
    if (items.length > 0 && bad.length === 0) return items;
    ctx.addIssue({
      code: 'custom',
      message: `${refusal}${bad.length > 0 ? `; not one: ${bad.map((x) => JSON.stringify(x)).join(', ')}` : ''}`,
    });
    return z.NEVER;
  });

/**
 * A DNS name (labels of letters, digits, - and _) or an IPv4 or bracketed IPv6 address, then an
 * optional port from 1 to 65535.
 */
function validHost(h: string): boolean {
  const m =
    /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/.exec(
      h,
    );
  return m !== null && (m[1] === undefined || (Number(m[1]) >= 1 && Number(m[1]) <= 65535));
}

/** An IP address or CIDR range, or one of the named ranges loopback, linklocal, uniquelocal. */
function trustedProxy(p: string): boolean {
  const [addr = '', bits, ...rest] = p.split('/');
  const family = isIP(addr);
  if (['loopback', 'linklocal', 'uniquelocal'].includes(p)) return true;
  if (family === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** Every variable daybook reads, with its default. The README's table is made from this. */
export const ENV_SCHEMA = z.object({
  DATABASE_URL: url('DATABASE_URL', ['postgres:', 'postgresql:']).optional(),
  /**
   * Where webhook delivery listens for new events (LISTEN/NOTIFY): a URL reaching Postgres
   * directly, for a DATABASE_URL that goes through PgBouncer in transaction mode. Unset: DATABASE_URL.
   */
  DAYBOOK_LISTEN_URL: url('DAYBOOK_LISTEN_URL', ['postgres:', 'postgresql:']).optional(),
  /**
   * Whether the driver uses prepared statements: `false` behind PgBouncer in transaction mode
   * before 1.21, which cannot keep them.
   */
  DAYBOOK_DB_PREPARE: z
    .enum(['true', 'false'], { message: 'DAYBOOK_DB_PREPARE must be true or false' })
    .default('true')
    .transform((v) => v === 'true'),
  DAYBOOK_DATA_DIR: z.string().trim().min(1).default('.daybook'),
  REDIS_URL: url('REDIS_URL', ['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  /**
   * A Redis Cluster instead of one Redis: its seed nodes, `host:port` or redis:// URLs separated by
   * commas (see runtime/redis.ts). When set, REDIS_URL is not used.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .trim()
    .optional()
    .superRefine((v, ctx) => {
      if (v === undefined || v === '') return;
      try {
        parseClusterNodes(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  DAYBOOK_REDIS_PREFIX: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]+$/, 'DAYBOOK_REDIS_PREFIX may hold letters, digits, _ and - only')
    .default('daybook'),
  DAYBOOK_API_BASE_URL: apiBaseUrl().optional(),
  // The message never quotes the value: it is a secret.
  DAYBOOK_API_KEY: z
    .string()
    .trim()
    .min(1, 'DAYBOOK_API_KEY is empty')
    .regex(
      /^[\x21-\x7e]+$/,
      'DAYBOOK_API_KEY may hold printable ASCII only (no spaces, line breaks or other characters an HTTP header cannot carry)',
    )
    .optional(),
  DAYBOOK_HTTP_TIMEOUT_MS: int('DAYBOOK_HTTP_TIMEOUT_MS', 1000, 600_000).default(30_000),
  DAYBOOK_MAX_BODY_BYTES: int('DAYBOOK_MAX_BODY_BYTES', 1024, 1_073_741_824).default(16 * 1024 * 1024),
  DAYBOOK_ENTERPRISE_CRON: cron('DAYBOOK_ENTERPRISE_CRON').default('30 3 * * *'),
  DAYBOOK_PRODUCTS_CRON: cron('DAYBOOK_PRODUCTS_CRON').default('15 16 * * *'),
  DAYBOOK_CRON_TZ: timeZone('DAYBOOK_CRON_TZ').default('Asia/Shanghai'),
  DAYBOOK_ENTERPRISE_RATE: int('DAYBOOK_ENTERPRISE_RATE', 1, 100_000).default(100),
  DAYBOOK_PRODUCT_RATE: int('DAYBOOK_PRODUCT_RATE', 1, 100_000).default(30),
  DAYBOOK_CREDIT_BUDGET: int('DAYBOOK_CREDIT_BUDGET', 0).default(3000),
  DAYBOOK_CREDITS_PER_QUERY: int('DAYBOOK_CREDITS_PER_QUERY', 1, 1000).default(3),
  /**
   * Credits one product call costs, which the upstream does not document. Set, a product call
   * reserves that much of the cycle's budget and is booked at it (an amount the answer states
   * wins); unset, product calls are booked unpriced: a ledger row each, its credits null.
   */
  DAYBOOK_PRODUCT_CREDITS: int('DAYBOOK_PRODUCT_CREDITS', 0, 2_147_483_647).optional(),
  /**
   * The share of a cycle's capacity (percent, `20` or `20%`) that entries watched only as
   * shareholders of watched companies may take (`watch add --with-shareholders`,
   * src/plan/planner.ts); they come after every entry of the user's own.
   */
  DAYBOOK_RELATED_SHARE: z
    .string()
    .trim()
    .regex(/^\d{1,3}(\.\d+)?%?$/, 'DAYBOOK_RELATED_SHARE must be a percentage from 0 to 100, as 20 or 20%')
    .transform((v) => Number(v.replace('%', '')))
    .refine((n) => n <= 100, {
      message: 'DAYBOOK_RELATED_SHARE must be a percentage from 0 to 100, as 20 or 20%',
    })
    .default(20),
  /** Cycles after which a watch entry is owed a refresh before the planner's choice (src/plan/due.ts). */
  DAYBOOK_MAX_STALENESS_DAYS: int('DAYBOOK_MAX_STALENESS_DAYS', 1, 3650).default(30),
  /** Days the per-fetch bookkeeping is kept row by row (jobs/compact.ts); 0 keeps it forever. */
  DAYBOOK_BOOKKEEPING_DAYS: int('DAYBOOK_BOOKKEEPING_DAYS', 0, 3650).default(14),
  /** Days error answers nothing points to are kept (jobs/compact.ts); 0 keeps them forever. */
  DAYBOOK_ERROR_RETENTION_DAYS: int('DAYBOOK_ERROR_RETENTION_DAYS', 0, 3650).default(0),
  DAYBOOK_WORKER_CONCURRENCY: int('DAYBOOK_WORKER_CONCURRENCY', 1, 256).default(4),
  DAYBOOK_JOB_LOCK_MS: int('DAYBOOK_JOB_LOCK_MS', 2000, 600_000).default(30_000),
  /** Times a job may stall (its worker died running it) before BullMQ fails it (src/runtime/worker.ts). */
  DAYBOOK_JOB_MAX_STALLS: int('DAYBOOK_JOB_MAX_STALLS', 1, 1000).default(20),
  DAYBOOK_STOP_TIMEOUT_MS: int('DAYBOOK_STOP_TIMEOUT_MS', 1000, 3_600_000).default(50_000),
  DAYBOOK_PRODUCT_LOOKBACK_DAYS: int('DAYBOOK_PRODUCT_LOOKBACK_DAYS', 1, 30).default(2),
  DAYBOOK_PRODUCT_LIMIT: int('DAYBOOK_PRODUCT_LIMIT', 1, 20).default(20),
  DAYBOOK_RETRY_ATTEMPTS: int('DAYBOOK_RETRY_ATTEMPTS', 1, 100).default(8),
  DAYBOOK_RETRY_BASE_MS: int('DAYBOOK_RETRY_BASE_MS', 10, 3_600_000).default(2000),
  DAYBOOK_ADMIN_TOKEN: z
    .string()
    .trim()
    .min(16, 'DAYBOOK_ADMIN_TOKEN must be at least 16 characters')
    .optional(),
  /**
   * More Host header values the admin server answers to, beyond its bound address and loopback
   * names: comma-separated host names or IP addresses (IPv6 in brackets), each optionally with a
   * port. Lowercased; see src/runtime/admin.ts.
   */
  DAYBOOK_ADMIN_HOSTS: commaList(
    validHost,
    'DAYBOOK_ADMIN_HOSTS must be a comma-separated list of host names or IP addresses, each optionally with a port (for example admin.example.com,daybook-admin:9464,[fd00::5])',
  ).optional(),
  /**
   * The reverse proxies whose X-Forwarded-Proto (and -For) the admin server believes: comma-separated
   * addresses or CIDR ranges (10.0.0.0/8, ::1), or loopback, linklocal, uniquelocal. A session
   * cookie set through one that says https is Secure. Unset, no forwarded header is believed.
   */
  DAYBOOK_TRUSTED_PROXIES: commaList(
    trustedProxy,
    'DAYBOOK_TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges (for example 127.0.0.1,10.0.0.0/8), or loopback, linklocal, uniquelocal',
  ).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /**
   * The time daybook takes as now instead of the system clock, running on from there (as the
   * simulator's --clock does): an ISO 8601 time with its offset. For tests and rehearsals against
   * the simulator: `products get` and `products backfill` take today's US-Pacific date from it,
   * and record it as the time of their calls. Held as epoch milliseconds.
   */
  DAYBOOK_CLOCK: z
    .string()
    .trim()
    .refine(
      (v) =>
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})$/.test(v) &&
        isCalendarDate(v.slice(0, 10)) &&
        !Number.isNaN(Date.parse(v)),
      { message: 'DAYBOOK_CLOCK must be an ISO 8601 time with its offset, for example 2026-11-20T04:00:00Z' },
    )
    .transform((v) => Date.parse(v))
    .optional(),
  /** The wait before each webhook attempt, the first included (Svix's schedule by default). */
  DAYBOOK_WEBHOOK_SCHEDULE: parsed(
    parseSchedule,
    () => true,
    'DAYBOOK_WEBHOOK_SCHEDULE must be durations separated by commas, such as 0,5s,5m,30m,2h',
    DEFAULT_SCHEDULE,
  ),
  DAYBOOK_WEBHOOK_TIMEOUT_MS: int('DAYBOOK_WEBHOOK_TIMEOUT_MS', 100, 120_000).default(15_000),
  /** An endpoint failing this long without one success is disabled. */
  DAYBOOK_WEBHOOK_DISABLE_AFTER: parsed(
    parseDuration,
    (ms) => ms > 0,
    'DAYBOOK_WEBHOOK_DISABLE_AFTER must be a duration such as 5d or 12h',
    '5d',
  ),
  DAYBOOK_WEBHOOK_CONCURRENCY: int('DAYBOOK_WEBHOOK_CONCURRENCY', 1, 1000).default(32),
  /**
   * How long `daybook run` waits for the deliveries of its cycle before it leaves what is not
   * sent yet to a worker or `daybook deliver` (src/cli/run.ts): a duration (30s, 2m; 0 sends none).
   */
  DAYBOOK_RUN_DELIVERY_WAIT: parsed(
    parseDuration,
    (ms) => ms <= 3_600_000,
    'DAYBOOK_RUN_DELIVERY_WAIT must be a duration such as 30s or 2m (0 to 1h)',
    '30s',
  ),
  /**
   * The language people read: zh or en. Unset, a chat or mail subscription added without --lang
   * speaks Chinese, and the text of `daybook changes`, `status` and `digest` is English.
   */
  DAYBOOK_LANG: z.enum(['zh', 'en'], { message: 'DAYBOOK_LANG must be zh or en' }).optional(),
  /** Where people reach daybook's admin server: chat and mail messages link to its web console there. */
  DAYBOOK_PUBLIC_URL: url('DAYBOOK_PUBLIC_URL', ['http:', 'https:']).optional(),
  /**
   * The SMTP server mail subscriptions send through: smtp://user:password@host:587 (STARTTLS when
   * offered) or smtps://…:465. Its password is a secret: never logged or quoted.
   */
  DAYBOOK_SMTP_URL: url('DAYBOOK_SMTP_URL', ['smtp:', 'smtps:']).optional(),
  /** The sender of those mails: an address, or a name and an address (daybook <daybook@example.com>). */
  DAYBOOK_SMTP_FROM: z
    .string()
    .trim()
    .refine((v) => /^(?:[^<>@]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(v), {
      message: 'DAYBOOK_SMTP_FROM must be a mail address, such as daybook <daybook@example.com>',
    })
    .optional(),
  /**
   * Whether DAYBOOK_SMTP_URL's login may go unencrypted: `true` for a relay on this machine or a
   * network the operator trusts. By default a login goes only over smtps:// or STARTTLS, which is
   * then required (src/delivery/mailer.ts).
   */
  DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH: z
    .enum(['true', 'false'], { message: 'DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * The warehouse export's folder (docs/export.md): when set, a package is written there after
   * every cycle completes, and `daybook export` writes there without --to.
   */
  DAYBOOK_EXPORT_DIR: z
    .string()
    .trim()
    .min(1, { message: 'DAYBOOK_EXPORT_DIR must be a folder path' })
    .refine((v) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(v), {
      message: 'DAYBOOK_EXPORT_DIR must be a folder path (a bucket is loaded from a folder synced to it)',
    })
    .optional(),
  DAYBOOK_EXPORT_FORMAT: z
    .enum(['parquet', 'ndjson', 'csv'], { message: 'DAYBOOK_EXPORT_FORMAT must be parquet, ndjson or csv' })
    .default('parquet'),
});

export type Config = Readonly<z.infer<typeof ENV_SCHEMA>>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`bad configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * Parses a .env file with Node's own reader, util.parseEnv: KEY=VALUE lines (`export` before the
 * key, spaces around `=`), # comment lines, a comment after a value and a space, values in single,
 * double or backtick quotes (double quotes turn \n into a line break, and may span lines); a
 * later line wins. Around it, for files daybook has always read: a UTF-8 BOM is skipped (Node
 * would make it part of the first key), and a line that is no assignment (a stray word, an
 * indented comment) is skipped as before (Node 20 joins it to the key of the line after). Pure.
 */
export function parseDotenv(text: string): Record<string, string> {
  const parsed = parseEnv(text.startsWith('\uFEFF') ? text.slice(1) : text);
  const out: Record<string, string> = {};
  for (const [joined, value] of Object.entries(parsed)) {
    if (value === undefined) continue;
    const key = (joined.split(/\r\n|\n|\r/).at(-1) ?? '').trim().replace(/^export\s+/, '');
    if (key !== '') out[key] = value;
  }
  return out;
}

/**
 * Values of `keys` that Node's reader cuts short where docker compose (which reads the same
 * .env) and earlier daybooks did not: an unquoted value with a # right after another character
 * (`DAYBOOK_API_KEY=abc#123` reads as `abc`). Each is a problem naming the variable and its line,
 * never the value (it may be a secret). Only a key's last line counts, as only it is used.
 */
export function dotenvProblems(text: string, keys: ReadonlySet<string>): string[] {
  const last = new Map<string, { line: number; value: string }>();
  text.split(/\r\n|\n|\r/).forEach((line, i) => {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line.replace(/^\uFEFF/, ''));
    if (m && keys.has(m[1] as string))
      last.set(m[1] as string, { line: i + 1, value: (m[2] as string).trim() });
  });
  return [...last.entries()]
    .filter(([, { value }]) => !/^['"`]/.test(value) && /[^\s#]#/.test(value))
    .map(
      ([key, { line }]) =>
        `${key} in .env (line ${line}) holds a # right after another character, which Node's .env reader takes for the start of a comment (docker compose does not): put the value in quotes, ${key}="…"`,
    );
}

/**
 * Reads the configuration from `env` (the process environment by default), over the values of a
 * `.env` file in the working directory when there is one; the environment wins. Empty values
 * count as unset. Throws ConfigError listing every bad value.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  dotenvPath = '.env',
): Config {
  const dotenv = existsSync(dotenvPath) ? readFileSync(dotenvPath, 'utf8') : '';
  const fromFile = parseDotenv(dotenv);
  const merged: Record<string, string> = {};
  for (const key of Object.keys(ENV_SCHEMA.shape)) {
    const value = env[key] ?? fromFile[key];
    if (value !== undefined && value.trim() !== '') merged[key] = value;
  }
  // The file's values that are used: a variable of the environment wins over its line.
  const fileKeys = new Set(Object.keys(ENV_SCHEMA.shape).filter((k) => env[k] === undefined));
  const fileProblems = dotenvProblems(dotenv, fileKeys);
  const parsed = ENV_SCHEMA.safeParse(merged);
  if (!parsed.success || fileProblems.length > 0) {
    throw new ConfigError([
      ...fileProblems,
      ...(parsed.error?.issues ?? []).map((i) => {
        const key = String(i.path[0] ?? '');
        return i.message.startsWith(key) ? i.message : `${key}: ${i.message}`;
      }),
    ]);
  }
  return Object.freeze(parsed.data);
}
