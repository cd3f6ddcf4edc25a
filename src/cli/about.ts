/**
 * Every daybook command by its path, and the sentence its --help opens with: the one place a
 * command says what it is for, read together when the wording of one is changed.
 */
import { Command } from 'commander';

export const ABOUT = {
  'analytics-role':
    'Create (or update) a login role that can SELECT the analytics views and nothing else: no writes, no raw landing, no internal tables, no temporary tables or large objects (taken from PUBLIC in this database), and a statement timeout (60 seconds unless --statement-timeout says otherwise). Says on stderr what Postgres still allows it.',
  changes:
    'Read the change log (analytics.enterprise_changes), newest first. --since and --until select by the cycle shown (the Beijing date of the refresh the change was found in); --detected-since by when daybook found it.',
  compact:
    'Compact the per-fetch bookkeeping of cycles older than DAYBOOK_BOOKKEEPING_DAYS (the plan job does it after every plan): delete their cycle_fetches rows, move their booked enterprise ledger entries to their narrow compacted form (every entry stays, read through credit_ledger), add their finished enterprise runs up into run_summaries, and delete superseded sightings; with DAYBOOK_ERROR_RETENTION_DAYS set, drop the error answers older than that which nothing points to. The ledger and all history are kept forever.',
  daybook:
    'Scheduled batch ingestion of an enterprise registry and a product trending list into Postgres, with full history and a change log.',
  deliver:
    'Deliver webhooks: queue new events for each subscription and send everything due, then stop (or, with --watch, keep going until SIGTERM/SIGINT). Any number can run at once, beside workers.',
  deliveries: 'The webhook attempt log, newest first: status, latency and error of each attempt.',
  demo: 'Run daybook end to end on this machine: embedded database, built-in simulator, ~20 watched enterprises, three simulated daily cycles; then show what landed.',
  digest:
    "Print a cycle's digest for people: its companies, the most severe first, each with its changes under it in words (--lang zh|en), or --json for the structured list and its Markdown. The same digest goes to --digest subscriptions as digest.daily when the cycle completes.",
  doctor:
    "Check the whole setup in one command: the configuration, Postgres (its version, migrations and read-only role), Redis, the upstream (DNS and TLS, and the key's shape: no credit is spent), SMTP, each subscription's receiver, the clock, the schedules and the free disk space. Each check prints a line: passed, failed with how to fix it, or skipped with why; the exit code is 1 when one failed.",
  drift:
    'Format drift seen in upstream answers: unknown fields, documented fields that were missing, and type or format variants, per operation, with counts and first and last seen.',
  enqueue:
    "Put a cycle's plan (and optionally a date's product pull) on the queue by hand, for the workers; once the cycle is planned, a top-up of its plan for the entries due and not planned yet (a company added today is bought today, within the cycle's credits and rate). Deterministic job ids make a repeat harmless.",
  events:
    'List events from the outbox, oldest first, after a sequence number: every change, company event and operational event daybook wrote, with no expiry. Page with --after <the last sequence shown>. The event types are listed in docs/channels.md (Events).',
  'events replay':
    "Send a subscription's events again from a point of the outbox: delivered ones go again with the same webhook-id (receivers deduplicate on it), failed ones get a fresh retry schedule. They are sent by the next delivery (daybook deliver, a worker, daybook run).",
  export:
    'Write what is new since the last export to a folder, as one load package (load_id=<n>/: a file per table, schema.json, and manifest.json written last). A warehouse loads the packages in order and keeps every version of every enterprise and product (SCD type 2), every change and event. Nothing new: nothing is written. The tables, their columns and loading recipes are in docs/export.md.',
  migrate: 'Apply the database migrations (safe to run twice, and from several processes at once).',
  plan: 'Inspect the planner: which watch entries a cycle refreshes, in what order, and why (docs/planner.md).',
  'plan explain':
    "Explain the plan of a cycle for watch entries: each one's change-rate estimate (changes per month, from its own fetches and its cohort's prior) and how sure it is, its weight, the chance it changed since its last refresh, its interval and due time, its class in the plan order and why it stands there, and whether the cycle selects, defers or skips it, and why. Read-only: plans the cycle as the plan job would without recording anything.",
  products: 'Product trending lists.',
  'products backfill':
    'Pull the trending lists of a range of dates, in this process. Resumable: dates already landed are skipped unless --force (an empty list answered before its US-Pacific day was over does not count as landed: it may not have been published yet).',
  'products get':
    'Query the product operation once, by hand: the trending list of a date (--date, --limit) or the detail of one product (--name), never both. The answer is landed and applied like a scheduled pull, then shown: the products as a table (position, name, votes, comments, topics, product id), or as JSON with --json, and a summary line with the counts.',
  rebuild:
    'Empty the normalized tables and replay the raw landing (raw_responses and their bodies) in landing order, in one transaction, with the rules of live ingestion: every event is derived again, and answers live ingestion rejected as stale stay rejected. The result equals the state before.',
  resume:
    'Resume enterprise work paused by insufficient_credits (or a refusing upstream): clears the pause, re-enqueues the entries deferred by the workers and plans the cycle again, so entries the plan deferred are taken within the credits left.',
  run: "Run a cycle once, in this process, without Redis: the products pulls and the enterprise refreshes, within the rate limit and the cycle's credit budget.",
  scheduler:
    'Enqueue the daily work on cron ticks (DAYBOOK_ENTERPRISE_CRON, DAYBOOK_PRODUCTS_CRON in DAYBOOK_CRON_TZ). Safe to run several: one instance is elected per tick, and job ids are deterministic. On start it catches up the latest tick it may have missed.',
  serve:
    'The admin server: the web console at /ui/ (companies, changes, the watchlist), the event feed at /events, Bull Board at /queues, Prometheus metrics at /metrics, /healthz (Postgres and Redis). Bound to 127.0.0.1 unless --host; elsewhere a token (DAYBOOK_ADMIN_TOKEN) is required.',
  sim: 'Run the upstream simulator: both API operations over a seeded world, with keys, credits, a sliding-window rate limit, a settable clock and fault injection.',
  sql: 'Run one read-only SQL statement as a read-only role and print the rows (the analytics.* views, the stable contract). The statement is cancelled after --timeout seconds (60), and the table shows at most --max-rows rows (1,000); --csv and --json print every row.',
  status:
    'Show the current cycle: progress, credits against budget, deferred entries, recent failures and queue counts.',
  subscribe:
    'Subscriptions: where events are pushed: a webhook signed with Standard Webhooks, a Slack, Feishu, DingTalk, WeCom or Teams channel, or mail.',
  'subscribe add':
    'Subscribe a URL (or mailto: addresses, --format email) to events. For a webhook, prints the signing secret (whsec_…) once: keep it, it is never shown again. Chat and mail subscriptions get one readable message per event and per digest, in Chinese or English (--lang). Deliveries start with the events written from now on (--from-start for the whole history).',
  'subscribe list': 'List subscriptions and their state (never their secrets).',
  'subscribe pause': 'Pause deliveries to a subscription; they wait and go on resume.',
  'subscribe remove': 'Remove a subscription and its pending deliveries (the attempt log goes with it).',
  'subscribe resume': 'Resume a paused or disabled subscription: what was written meanwhile is delivered.',
  'subscribe test':
    'Send a subscription a sample message now and print what its receiver answered (exit code 1 when it refused).',
  'subscribe rotate-secret':
    'Give a subscription a new signing secret, shown once. For --overlap (default 24h) deliveries carry signatures by both the old and the new secret, so the receiver can switch without losing one.',
  watch: 'Manage the watchlist: the enterprises re-queried after each 03:00 Beijing refresh.',
  'watch add':
    'Watch one or more enterprises by name. Every name is checked first (1-100 characters, no control characters); one bad name writes nothing. Names differing only in full-/half-width, case or spacing are the same entry.',
  'watch import':
    'Import a UTF-8 CSV with a header row: a name column, an optional priority column and an optional uscc column. Invalid rows (a bad code included) are listed on stderr as "line N: problem" and nothing is imported (exit 2), unless --skip-invalid.',
  'watch list':
    'List the watched enterprises, highest priority first, with their last refresh and outcome, the name and code they resolved to, how the keyword matched (code, exact, former_name, partial), the expected code, the flag of an answer refused for resolving elsewhere, the estimated changes per month (from its own refreshes and its cohort; daybook plan explain --pid shows how) and when the planner next wants it refreshed.',
  'watch remove':
    'Stop watching an enterprise, by the name it was added with (any width or case) or by the PID it resolved to. The entry is kept inactive, so its history stays.',
  worker:
    'Process queued jobs (products, plan, enterprise) until SIGTERM/SIGINT. Run as many as you like, on any machines: they share one rate limit per upstream operation and one credit budget.',
} as const;

export type CommandPath = keyof typeof ABOUT;

/** The command at `path` (its last word is its name), with its sentence from ABOUT. */
export function command(path: CommandPath): Command {
  return new Command(path.split(' ').at(-1) as string).description(ABOUT[path]);
}
