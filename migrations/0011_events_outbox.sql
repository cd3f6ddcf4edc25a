CREATE TABLE "events" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"id" text DEFAULT 'evt_' || replace(gen_random_uuid()::text, '-', '') NOT NULL,
	"type" text NOT NULL,
	"severity" text NOT NULL,
	"pid" text,
	"name" text,
	"company_seq" integer,
	"cycle" date,
	"detected_at" timestamp with time zone NOT NULL,
	"effective_date" date,
	"raw_response_id" bigint,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_severity_check" CHECK ("events"."severity" in ('high', 'medium', 'low'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "events_id_key" ON "events" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "events_pid_company_seq_key" ON "events" USING btree ("pid","company_seq");--> statement-breakpoint
CREATE INDEX "events_type_seq_idx" ON "events" USING btree ("type","seq");--> statement-breakpoint
CREATE INDEX "events_cycle_idx" ON "events" USING btree ("cycle");--> statement-breakpoint
CREATE FUNCTION "daybook_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;--> statement-breakpoint
CREATE TRIGGER "events_append_only" BEFORE UPDATE OR DELETE ON "events" FOR EACH ROW EXECUTE FUNCTION "daybook_events_append_only"();--> statement-breakpoint
CREATE TRIGGER "events_no_truncate" BEFORE TRUNCATE ON "events" FOR EACH STATEMENT EXECUTE FUNCTION "daybook_events_append_only"();
--> statement-breakpoint
CREATE VIEW analytics.events AS
SELECT seq AS sequence, id AS event_id, type, severity, pid, name, company_seq AS company_sequence,
       cycle, detected_at, effective_date, raw_response_id, data
FROM events;
