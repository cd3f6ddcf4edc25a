CREATE TABLE "watch_relations" (
	"root_id" bigint NOT NULL,
	"entry_id" bigint NOT NULL,
	"level" smallint NOT NULL,
	"path_pids" text[] NOT NULL,
	"path_names" text[] NOT NULL,
	CONSTRAINT "watch_relations_root_id_entry_id_pk" PRIMARY KEY("root_id","entry_id"),
	CONSTRAINT "watch_relations_level_check" CHECK ("watch_relations"."level" between 1 and 3)
);
--> statement-breakpoint
ALTER TABLE "resolution_mismatches" ALTER COLUMN "expected_uscc" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "resolution_mismatches" ADD COLUMN "expected_pid" text;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "shareholder_depth" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "direct" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "watchlist" ADD COLUMN "expected_pid" text;--> statement-breakpoint
ALTER TABLE "watch_relations" ADD CONSTRAINT "watch_relations_root_id_watchlist_id_fk" FOREIGN KEY ("root_id") REFERENCES "public"."watchlist"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "watch_relations" ADD CONSTRAINT "watch_relations_entry_id_watchlist_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."watchlist"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "watch_relations_entry_idx" ON "watch_relations" USING btree ("entry_id");--> statement-breakpoint
CREATE INDEX "watchlist_expected_pid_idx" ON "watchlist" USING btree ("expected_pid") WHERE "watchlist"."expected_pid" is not null;--> statement-breakpoint
ALTER TABLE "watchlist" ADD CONSTRAINT "watchlist_shareholder_depth_check" CHECK ("watchlist"."shareholder_depth" between 0 and 3);