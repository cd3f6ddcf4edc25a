CREATE TABLE "change_cohorts" (
	"cohort" text PRIMARY KEY NOT NULL,
	"entries" integer NOT NULL,
	"rate" double precision NOT NULL,
	"days" double precision NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "planner_state" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"scale" double precision,
	"cycle" date,
	"capacity" integer DEFAULT 0 NOT NULL,
	"entries" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "watchlist_plan_order_idx";--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "refreshed_cycle" date;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "due_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "change_rate" double precision;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "change_weight" double precision DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "change_history" jsonb;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "change_cohort" text;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "boost_left" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "watchlist_owed_idx" ON "watchlist" USING btree ("priority" DESC NULLS FIRST,"refreshed_cycle" NULLS FIRST,"id") WHERE "watchlist"."active";--> statement-breakpoint
CREATE INDEX "watchlist_due_order_idx" ON "watchlist" USING btree ("priority" DESC NULLS FIRST,"due_at" NULLS FIRST,"id") WHERE "watchlist"."active";--> statement-breakpoint
-- The cycle of the last successful refresh: the attempt's cycle when the last attempt succeeded,
-- else the cycle (03:00 Beijing) in force when it was last refreshed.
UPDATE "watchlist" SET "refreshed_cycle" = CASE WHEN "last_outcome" = 'success' AND "last_cycle" IS NOT NULL
    THEN "last_cycle"
    ELSE (("last_refreshed_at" AT TIME ZONE 'Asia/Shanghai') - interval '3 hours')::date END
  WHERE "last_refreshed_at" IS NOT NULL;
--> statement-breakpoint
-- Entries refreshed before the change-rate planner keep their round-robin order until their next
-- refresh gives them an estimate: due at their last refresh (or, when only ever attempted, when
-- they were added). Never-attempted entries stay null: first in their priority.
UPDATE "watchlist" SET "due_at" = coalesce("last_refreshed_at", "added_at")
  WHERE "last_refreshed_at" IS NOT NULL OR "last_outcome" IS NOT NULL;
