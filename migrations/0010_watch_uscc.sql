-- Watching by unified social credit code (src/watch/uscc.ts): the code a watch entry expects
-- (`watchlist.uscc`, or `pin_uscc` to take the code of its next successful refresh), the answers
-- refused for naming an enterprise with another code (`resolution_mismatches`, kept by rebuild),
-- and the flag `watch list` shows. A refused answer is recorded as a `resolution_mismatch` event in
-- enterprise_observations, under the PID of the enterprise it named, which has no history: so that
-- column no longer references `enterprises`. analytics.enterprise_events reads every kind of
-- enterprise_observations, so it shows the new kind unchanged.
CREATE TABLE "resolution_mismatches" (
	"raw_response_id" bigint PRIMARY KEY NOT NULL,
	"watch_id" bigint,
	"cycle" date NOT NULL,
	"keyword" text NOT NULL,
	"expected_uscc" text NOT NULL,
	"found_uscc" text,
	"found_name" text,
	"found_pid" text,
	"decided_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "enterprise_observations" DROP CONSTRAINT "enterprise_observations_pid_enterprises_pid_fk";
--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "uscc" text;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "pin_uscc" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "resolution_mismatch" text;--> statement-breakpoint
ALTER TABLE "resolution_mismatches" ADD CONSTRAINT "resolution_mismatches_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "resolution_mismatches" ADD CONSTRAINT "resolution_mismatches_watch_id_watchlist_id_fk" FOREIGN KEY ("watch_id") REFERENCES "public"."watchlist"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "resolution_mismatches_watch_idx" ON "resolution_mismatches" USING btree ("watch_id");