CREATE TABLE "run_summaries" (
	"cycle" date NOT NULL,
	"kind" text NOT NULL,
	"outcome" text NOT NULL,
	"runs" integer NOT NULL,
	"credits" bigint NOT NULL,
	"first_started_at" timestamp with time zone,
	"last_finished_at" timestamp with time zone,
	"seconds" double precision DEFAULT 0 NOT NULL,
	"compacted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "run_summaries_cycle_kind_outcome_pk" PRIMARY KEY("cycle","kind","outcome")
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_run_id_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "raw_responses" DROP CONSTRAINT "raw_responses_run_id_runs_id_fk";
--> statement-breakpoint
DROP INDEX "raw_responses_run_idx";--> statement-breakpoint
DROP INDEX "raw_responses_body_idx";--> statement-breakpoint
CREATE INDEX "runs_running_job_idx" ON "runs" USING btree ("job_id") WHERE "runs"."outcome" = 'running';--> statement-breakpoint
CREATE INDEX "runs_failed_idx" ON "runs" USING btree ("finished_at") WHERE "runs"."outcome" = 'failed';