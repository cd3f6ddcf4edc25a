CREATE TABLE "credit_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"cycle" date NOT NULL,
	"operation" text NOT NULL,
	"pid" text,
	"keyword" text,
	"credits" integer NOT NULL,
	"remark" text,
	"run_id" bigint,
	"raw_response_id" bigint,
	"billed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cycle_budgets" (
	"cycle" date PRIMARY KEY NOT NULL,
	"budget" integer NOT NULL,
	"reserved" integer DEFAULT 0 NOT NULL,
	"spent" integer DEFAULT 0 NOT NULL,
	"paused_at" timestamp with time zone,
	"paused_reason" text
);
--> statement-breakpoint
CREATE TABLE "cycle_fetches" (
	"cycle" date NOT NULL,
	"watch_id" bigint NOT NULL,
	"status" text NOT NULL,
	"pid" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"credits_reserved" integer DEFAULT 0 NOT NULL,
	"credits_billed" integer DEFAULT 0 NOT NULL,
	"raw_response_id" bigint,
	"error_code" text,
	"error_message" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cycle_fetches_cycle_watch_id_pk" PRIMARY KEY("cycle","watch_id")
);
--> statement-breakpoint
CREATE TABLE "enterprise_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"pid" text NOT NULL,
	"cycle" date NOT NULL,
	"version_id" bigint NOT NULL,
	"previous_version_id" bigint NOT NULL,
	"category" text NOT NULL,
	"field" text NOT NULL,
	"kind" text NOT NULL,
	"before" text,
	"after" text,
	"detail" text,
	"severity" text NOT NULL,
	"detected_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "enterprise_clearing_members" (
	"version_id" bigint NOT NULL,
	"ordinal" smallint NOT NULL,
	"name" text NOT NULL,
	"position" text,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "enterprise_clearing_members_version_id_ordinal_pk" PRIMARY KEY("version_id","ordinal")
);
--> statement-breakpoint
CREATE TABLE "enterprise_observations" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"pid" text NOT NULL,
	"kind" text NOT NULL,
	"cycle" date NOT NULL,
	"keyword" text,
	"detail" text,
	"raw_response_id" bigint,
	"observed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "enterprise_persons" (
	"version_id" bigint NOT NULL,
	"ordinal" smallint NOT NULL,
	"name" text NOT NULL,
	"position" text,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "enterprise_persons_version_id_ordinal_pk" PRIMARY KEY("version_id","ordinal")
);
--> statement-breakpoint
CREATE TABLE "enterprise_shareholders" (
	"version_id" bigint NOT NULL,
	"ordinal" smallint NOT NULL,
	"name" text,
	"type" text,
	"shareholder_pid" text,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "enterprise_shareholders_version_id_ordinal_pk" PRIMARY KEY("version_id","ordinal")
);
--> statement-breakpoint
CREATE TABLE "enterprise_versions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"pid" text NOT NULL,
	"version" integer NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	"is_current" boolean NOT NULL,
	"content_hash" text NOT NULL,
	"cycle" date NOT NULL,
	"raw_response_id" bigint,
	"ent_name" text NOT NULL,
	"history_name" text,
	"is_listed" boolean,
	"legal_person" text,
	"legal_person_desc" text,
	"es_date" date,
	"sconform" text,
	"reg_no" text,
	"uncid" text,
	"ent_type_code" text,
	"ent_type" text,
	"reg_cap" numeric,
	"reg_cap_text" text,
	"capital_text" text,
	"capital_unit" text,
	"capital_currency" text,
	"capital_amount" numeric,
	"province" smallint,
	"op_from" date,
	"operating_to" date,
	"operating_perpetual" boolean NOT NULL,
	"operating_to_text" text,
	"reg_org" text,
	"appr_date" date,
	"revoke_date" date,
	"revoke_reason" text,
	"ent_status" text,
	"op_loc" text,
	"op_scope" text,
	"participants" text,
	"participants_count" integer,
	"industry_phy" text,
	"industry_big" text,
	"industry_middle" text,
	"unread_text" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"normalized" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "enterprises" (
	"pid" text PRIMARY KEY NOT NULL,
	"current_version_id" bigint,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"presence" text DEFAULT 'present' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_comments" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"dedup_key" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone,
	"created_at_text" text,
	"first_seen_at" timestamp with time zone NOT NULL,
	"raw_response_id" bigint
);
--> statement-breakpoint
CREATE TABLE "product_links" (
	"version_id" bigint NOT NULL,
	"position" smallint NOT NULL,
	"url" text NOT NULL,
	"type" text,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "product_links_version_id_position_pk" PRIMARY KEY("version_id","position")
);
--> statement-breakpoint
CREATE TABLE "product_media" (
	"version_id" bigint NOT NULL,
	"position" smallint NOT NULL,
	"url" text NOT NULL,
	"type" text,
	"video_url" text,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "product_media_version_id_position_pk" PRIMARY KEY("version_id","position")
);
--> statement-breakpoint
CREATE TABLE "product_topics" (
	"version_id" bigint NOT NULL,
	"topic" text NOT NULL,
	CONSTRAINT "product_topics_version_id_topic_pk" PRIMARY KEY("version_id","topic")
);
--> statement-breakpoint
CREATE TABLE "product_versions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"version" integer NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	"is_current" boolean NOT NULL,
	"content_hash" text NOT NULL,
	"raw_response_id" bigint,
	"record_id" text NOT NULL,
	"name" text NOT NULL,
	"tagline" text,
	"description" text,
	"url" text,
	"created_at" timestamp with time zone,
	"featured_at" timestamp with time zone,
	"thumbnail_url" text,
	"thumbnail_type" text,
	"unread_text" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"extra" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"normalized" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "products" (
	"product_id" text PRIMARY KEY NOT NULL,
	"current_version_id" bigint,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "raw_responses" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" bigint,
	"operation" text NOT NULL,
	"params" jsonb NOT NULL,
	"http_status" smallint,
	"body_json" jsonb,
	"body_text" text,
	"sha256" text,
	"outcome" text NOT NULL,
	"cycle" date,
	"fetched_at" timestamp with time zone NOT NULL,
	"duration_ms" integer
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"cycle" date,
	"list_date" date,
	"entity" text,
	"job_id" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"outcome" text DEFAULT 'running' NOT NULL,
	"error_code" text,
	"error_message" text,
	"counts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"credits" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trending_snapshots" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"list_date" date NOT NULL,
	"position" smallint NOT NULL,
	"product_id" text NOT NULL,
	"votes_count" integer,
	"comments_count" integer,
	"fetched_at" timestamp with time zone NOT NULL,
	"raw_response_id" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "watchlist" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"keyword" text NOT NULL,
	"keyword_key" text NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"pid" text,
	"added_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_refreshed_at" timestamp with time zone,
	"last_cycle" date,
	"last_outcome" text,
	"last_error" text
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD CONSTRAINT "cycle_fetches_watch_id_watchlist_id_fk" FOREIGN KEY ("watch_id") REFERENCES "public"."watchlist"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cycle_fetches" ADD CONSTRAINT "cycle_fetches_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_changes" ADD CONSTRAINT "enterprise_changes_pid_enterprises_pid_fk" FOREIGN KEY ("pid") REFERENCES "public"."enterprises"("pid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_changes" ADD CONSTRAINT "enterprise_changes_version_id_enterprise_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."enterprise_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_changes" ADD CONSTRAINT "enterprise_changes_previous_version_id_enterprise_versions_id_fk" FOREIGN KEY ("previous_version_id") REFERENCES "public"."enterprise_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_clearing_members" ADD CONSTRAINT "enterprise_clearing_members_version_id_enterprise_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."enterprise_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_observations" ADD CONSTRAINT "enterprise_observations_pid_enterprises_pid_fk" FOREIGN KEY ("pid") REFERENCES "public"."enterprises"("pid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_observations" ADD CONSTRAINT "enterprise_observations_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_persons" ADD CONSTRAINT "enterprise_persons_version_id_enterprise_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."enterprise_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_shareholders" ADD CONSTRAINT "enterprise_shareholders_version_id_enterprise_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."enterprise_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_versions" ADD CONSTRAINT "enterprise_versions_pid_enterprises_pid_fk" FOREIGN KEY ("pid") REFERENCES "public"."enterprises"("pid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enterprise_versions" ADD CONSTRAINT "enterprise_versions_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_comments" ADD CONSTRAINT "product_comments_product_id_products_product_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("product_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_comments" ADD CONSTRAINT "product_comments_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_links" ADD CONSTRAINT "product_links_version_id_product_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."product_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_media" ADD CONSTRAINT "product_media_version_id_product_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."product_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_topics" ADD CONSTRAINT "product_topics_version_id_product_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."product_versions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_versions" ADD CONSTRAINT "product_versions_product_id_products_product_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("product_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_versions" ADD CONSTRAINT "product_versions_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "raw_responses" ADD CONSTRAINT "raw_responses_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trending_snapshots" ADD CONSTRAINT "trending_snapshots_product_id_products_product_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("product_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trending_snapshots" ADD CONSTRAINT "trending_snapshots_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credit_ledger_cycle_idx" ON "credit_ledger" USING btree ("cycle");--> statement-breakpoint
CREATE UNIQUE INDEX "credit_ledger_raw_key" ON "credit_ledger" USING btree ("raw_response_id");--> statement-breakpoint
CREATE INDEX "cycle_fetches_status_idx" ON "cycle_fetches" USING btree ("cycle","status");--> statement-breakpoint
CREATE UNIQUE INDEX "cycle_fetches_pid_once_key" ON "cycle_fetches" USING btree ("cycle","pid") WHERE "cycle_fetches"."status" = 'succeeded';--> statement-breakpoint
CREATE INDEX "enterprise_changes_pid_idx" ON "enterprise_changes" USING btree ("pid","detected_at");--> statement-breakpoint
CREATE INDEX "enterprise_changes_cycle_idx" ON "enterprise_changes" USING btree ("cycle","severity");--> statement-breakpoint
CREATE INDEX "enterprise_observations_pid_idx" ON "enterprise_observations" USING btree ("pid","observed_at");--> statement-breakpoint
CREATE INDEX "enterprise_persons_name_idx" ON "enterprise_persons" USING btree ("name");--> statement-breakpoint
CREATE INDEX "enterprise_shareholders_pid_idx" ON "enterprise_shareholders" USING btree ("shareholder_pid");--> statement-breakpoint
CREATE UNIQUE INDEX "enterprise_versions_pid_version_key" ON "enterprise_versions" USING btree ("pid","version");--> statement-breakpoint
CREATE UNIQUE INDEX "enterprise_versions_current_key" ON "enterprise_versions" USING btree ("pid") WHERE "enterprise_versions"."is_current";--> statement-breakpoint
CREATE INDEX "enterprise_versions_uncid_idx" ON "enterprise_versions" USING btree ("uncid");--> statement-breakpoint
CREATE INDEX "enterprise_versions_name_idx" ON "enterprise_versions" USING btree ("ent_name");--> statement-breakpoint
CREATE INDEX "enterprise_versions_raw_idx" ON "enterprise_versions" USING btree ("raw_response_id");--> statement-breakpoint
CREATE UNIQUE INDEX "product_comments_dedup_key" ON "product_comments" USING btree ("dedup_key");--> statement-breakpoint
CREATE INDEX "product_comments_product_idx" ON "product_comments" USING btree ("product_id","created_at");--> statement-breakpoint
CREATE INDEX "product_topics_topic_idx" ON "product_topics" USING btree ("topic");--> statement-breakpoint
CREATE UNIQUE INDEX "product_versions_pid_version_key" ON "product_versions" USING btree ("product_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "product_versions_current_key" ON "product_versions" USING btree ("product_id") WHERE "product_versions"."is_current";--> statement-breakpoint
CREATE INDEX "product_versions_name_idx" ON "product_versions" USING btree ("name");--> statement-breakpoint
CREATE INDEX "raw_responses_op_fetched_idx" ON "raw_responses" USING btree ("operation","fetched_at");--> statement-breakpoint
CREATE INDEX "raw_responses_run_idx" ON "raw_responses" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "runs_kind_started_idx" ON "runs" USING btree ("kind","started_at");--> statement-breakpoint
CREATE INDEX "runs_cycle_idx" ON "runs" USING btree ("cycle");--> statement-breakpoint
CREATE UNIQUE INDEX "trending_snapshots_pull_position_key" ON "trending_snapshots" USING btree ("raw_response_id","position");--> statement-breakpoint
CREATE INDEX "trending_snapshots_date_idx" ON "trending_snapshots" USING btree ("list_date","fetched_at");--> statement-breakpoint
CREATE INDEX "trending_snapshots_product_idx" ON "trending_snapshots" USING btree ("product_id","fetched_at");--> statement-breakpoint
CREATE UNIQUE INDEX "watchlist_keyword_key" ON "watchlist" USING btree ("keyword_key");--> statement-breakpoint
CREATE INDEX "watchlist_pid_idx" ON "watchlist" USING btree ("pid");--> statement-breakpoint
CREATE INDEX "watchlist_plan_idx" ON "watchlist" USING btree ("active","priority","last_refreshed_at");