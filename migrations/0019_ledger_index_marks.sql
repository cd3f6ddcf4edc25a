CREATE TABLE "compaction_marks" (
	"cycle" date PRIMARY KEY NOT NULL,
	"enterprise_sighting_id" bigint NOT NULL,
	"product_sighting_id" bigint NOT NULL,
	"marked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "credit_ledger_cycle_idx";--> statement-breakpoint
DROP INDEX "credit_ledger_call_key";--> statement-breakpoint
DROP INDEX "raw_responses_landed_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "credit_ledger_cycle_call_key" ON "credit_ledger" USING btree ("cycle","watch_id","call_fence");--> statement-breakpoint
CREATE INDEX "raw_responses_landed_brin" ON "raw_responses" USING brin ("landed_at");