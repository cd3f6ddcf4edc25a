CREATE TABLE "keyword_resolutions" (
	"keyword" text PRIMARY KEY NOT NULL,
	"pid" text NOT NULL,
	"raw_response_id" bigint,
	"resolved_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limits" (
	"operation" text PRIMARY KEY NOT NULL,
	"calls" timestamp with time zone[] DEFAULT '{}' NOT NULL,
	"blocked_until" timestamp with time zone,
	"refusals" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "status" text DEFAULT 'booked' NOT NULL;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "watch_id" bigint;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "call_fence" bigint;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD COLUMN "holder" text;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD COLUMN "fence" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD COLUMN "call_fence" bigint;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD COLUMN "call_started_at" timestamp with time zone;--> statement-breakpoint
-- Answers landed before this migration keep their fetch time as their landing time.
ALTER TABLE "raw_responses" ADD COLUMN "landed_at" timestamp with time zone;--> statement-breakpoint
UPDATE "raw_responses" SET "landed_at" = "fetched_at";--> statement-breakpoint
ALTER TABLE "raw_responses" ALTER COLUMN "landed_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "raw_responses" ALTER COLUMN "landed_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "keyword_resolutions" ADD CONSTRAINT "keyword_resolutions_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "credit_ledger_call_key" ON "credit_ledger" USING btree ("cycle","watch_id","call_fence") WHERE "credit_ledger"."call_fence" is not null;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_status_check" CHECK ("credit_ledger"."status" in ('booked', 'presumed'));--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD CONSTRAINT "cycle_fetches_status_check" CHECK ("cycle_fetches"."status" in ('planned', 'deferred', 'skipped', 'fetching', 'retrying', 'succeeded', 'duplicate', 'failed'));--> statement-breakpoint
-- What each keyword resolved to last, from the landing (as a rebuild derives it).
INSERT INTO "keyword_resolutions" ("keyword", "pid", "raw_response_id", "resolved_at")
SELECT DISTINCT ON (r.params->>'ent_name') r.params->>'ent_name', btrim(r.body_json#>>'{metadata,content,PID}'), r.id, r.landed_at
FROM "raw_responses" r
WHERE r.operation = 'enterprise-search' AND r.outcome = 'success' AND r.params ? 'ent_name'
  AND coalesce(btrim(r.body_json#>>'{metadata,content,PID}'), '') <> ''
ORDER BY r.params->>'ent_name', r.landed_at DESC, r.id DESC;--> statement-breakpoint
-- analytics.credit_usage: booked and presumed credits apart. `credits` is what the budget counts
-- (both); `billed_queries` counts the calls the upstream answered and billed.
CREATE OR REPLACE VIEW analytics.credit_usage AS
SELECT
  l.cycle,
  l.operation,
  (count(*) FILTER (WHERE l.status = 'booked'))::int AS billed_queries,
  sum(l.credits)::int AS credits,
  (count(DISTINCT l.pid) FILTER (WHERE l.status = 'booked'))::int AS distinct_enterprises,
  min(l.billed_at) AS first_billed_at,
  max(l.billed_at) AS last_billed_at,
  (coalesce(sum(l.credits) FILTER (WHERE l.status = 'booked'), 0))::int AS booked_credits,
  (coalesce(sum(l.credits) FILTER (WHERE l.status = 'presumed'), 0))::int AS presumed_credits,
  (count(*) FILTER (WHERE l.status = 'presumed'))::int AS presumed_queries
FROM credit_ledger l
GROUP BY l.cycle, l.operation;
--> statement-breakpoint
-- The shared rate limiter (src/budget/limiter.ts): admits a call of `op` now (returns 0) or says
-- how many ms to wait. A sliding window of `window_ms` holding at most `lim` starts, at least
-- `gap_ms` apart, and a block set by a refusal; all by the database's clock, under the row's lock.
CREATE OR REPLACE FUNCTION daybook_rate_admit(op text, lim integer, window_ms integer, gap_ms integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
  r rate_limits%ROWTYPE;
  kept timestamptz[];
  n integer;
BEGIN
  INSERT INTO rate_limits (operation) VALUES (op) ON CONFLICT DO NOTHING;
  SELECT * INTO r FROM rate_limits WHERE operation = op FOR UPDATE;
  t := clock_timestamp();
  IF r.blocked_until IS NOT NULL AND r.blocked_until > t THEN
    RETURN greatest(1, ceil(extract(epoch FROM r.blocked_until - t) * 1000))::integer;
  END IF;
  SELECT coalesce(array_agg(c ORDER BY c), '{}') INTO kept
    FROM unnest(r.calls) AS c WHERE c > t - window_ms * interval '1 millisecond';
  n := cardinality(kept);
  IF n >= lim THEN
    RETURN greatest(1, ceil(extract(epoch FROM kept[n - lim + 1] + window_ms * interval '1 millisecond' - t) * 1000) + 1)::integer;
  END IF;
  IF gap_ms > 0 AND n > 0 AND kept[n] + gap_ms * interval '1 millisecond' > t THEN
    RETURN greatest(1, ceil(extract(epoch FROM kept[n] + gap_ms * interval '1 millisecond' - t) * 1000))::integer;
  END IF;
  UPDATE rate_limits SET calls = kept || t WHERE operation = op;
  RETURN 0;
END
$$;
