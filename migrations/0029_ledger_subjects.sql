-- The credit ledger in two tables: the words of an entry (operation, enterprise, keyword,
-- remark) once in ledger_subjects, and one narrow row per billed call in ledger_entries pointing
-- at them. An enterprise watched every day is billed for the same words every day; they were
-- restated on every row. The view credit_ledger joins them back: the same rows, columns and ids
-- as the table it replaces, so every reader (analytics.credit_usage, the export, status) reads
-- what it read before. Every entry is copied as it was; nothing is lost or changed.
CREATE TABLE "ledger_subjects" (
	"id" serial PRIMARY KEY NOT NULL,
	"key" "bytea" NOT NULL,
	"operation" text NOT NULL,
	"pid" text,
	"keyword" text,
	"remark" text
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_subjects_key" ON "ledger_subjects" USING btree ("key");--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" bigint,
	"raw_response_id" bigint,
	"billed_at" timestamp with time zone NOT NULL,
	"watch_id" bigint,
	"call_fence" bigint,
	"load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"cycle" date NOT NULL,
	"subject_id" integer NOT NULL,
	"credits" integer,
	"status" text DEFAULT 'booked' NOT NULL,
	CONSTRAINT "ledger_entries_status_check" CHECK ("ledger_entries"."status" in ('booked', 'presumed', 'unconfirmed'))
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_subject_id_ledger_subjects_id_fk" FOREIGN KEY ("subject_id") REFERENCES "public"."ledger_subjects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- The subject of these words: found by their key, or added (concurrent writers of the same words
-- meet on the unique key and both get its one row).
CREATE FUNCTION "daybook_ledger_subject"(p_operation text, p_pid text, p_keyword text, p_remark text)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  k bytea := sha256(convert_to(jsonb_build_array(p_operation, p_pid, p_keyword, p_remark)::text, 'UTF8'));
  s integer;
BEGIN
  SELECT id INTO s FROM ledger_subjects WHERE key = k;
  IF s IS NULL THEN
    INSERT INTO ledger_subjects (key, operation, pid, keyword, remark)
    VALUES (k, p_operation, p_pid, p_keyword, p_remark)
    ON CONFLICT (key) DO NOTHING RETURNING id INTO s;
    IF s IS NULL THEN
      SELECT id INTO s FROM ledger_subjects WHERE key = k;
    END IF;
  END IF;
  RETURN s;
END
$$;--> statement-breakpoint
INSERT INTO ledger_entries (id, run_id, raw_response_id, billed_at, watch_id, call_fence, load_xid, cycle,
                            subject_id, credits, status)
SELECT id, run_id, raw_response_id, billed_at, watch_id, call_fence, load_xid, cycle,
       daybook_ledger_subject(operation, pid, keyword, remark), credits, status
FROM credit_ledger ORDER BY id;--> statement-breakpoint
SELECT setval(pg_get_serial_sequence('ledger_entries', 'id'),
              greatest((SELECT max(id) FROM ledger_entries), (SELECT last_value FROM credit_ledger_id_seq), 1));--> statement-breakpoint
DROP VIEW analytics.credit_usage;--> statement-breakpoint
DROP TABLE "credit_ledger";--> statement-breakpoint
CREATE INDEX "ledger_entries_load_xid_idx" ON "ledger_entries" USING btree ("load_xid");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_raw_key" ON "ledger_entries" USING btree ("raw_response_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_cycle_call_key" ON "ledger_entries" USING btree ("cycle","watch_id","call_fence");--> statement-breakpoint
-- The ledger as it reads: one row per entry, its words joined back. A left join on the subject's
-- key (every entry has one) lets a query that reads no word skip the join.
CREATE VIEW credit_ledger AS
SELECT e.id, e.cycle, s.operation, s.pid, s.keyword, e.credits, s.remark, e.run_id, e.raw_response_id,
       e.billed_at, e.status, e.watch_id, e.call_fence, e.load_xid
FROM ledger_entries e LEFT JOIN ledger_subjects s ON s.id = e.subject_id;--> statement-breakpoint
CREATE VIEW analytics.credit_usage AS
SELECT
  l.cycle,
  l.operation,
  (count(*) FILTER (WHERE l.status = 'booked'))::int AS billed_queries,
  (coalesce(sum(l.credits), 0))::int AS credits,
  (count(DISTINCT l.pid) FILTER (WHERE l.status = 'booked'))::int AS distinct_enterprises,
  min(l.billed_at) AS first_billed_at,
  max(l.billed_at) AS last_billed_at,
  (coalesce(sum(l.credits) FILTER (WHERE l.status = 'booked'), 0))::int AS booked_credits,
  (coalesce(sum(l.credits) FILTER (WHERE l.status = 'presumed'), 0))::int AS presumed_credits,
  (count(*) FILTER (WHERE l.status = 'presumed'))::int AS presumed_queries,
  (coalesce(sum(l.credits) FILTER (WHERE l.status = 'unconfirmed'), 0))::int AS unconfirmed_credits,
  (count(*) FILTER (WHERE l.status = 'unconfirmed'))::int AS unconfirmed_queries,
  (count(*) FILTER (WHERE l.credits IS NULL))::int AS unpriced_queries
FROM credit_ledger l
GROUP BY l.cycle, l.operation;--> statement-breakpoint
CREATE TRIGGER "ledger_entries_load_xid" BEFORE UPDATE ON "ledger_entries" FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "daybook_touch_load_xid"();--> statement-breakpoint
CREATE TRIGGER "ledger_entries_count_insert" AFTER INSERT ON "ledger_entries" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_insert();--> statement-breakpoint
CREATE TRIGGER "ledger_entries_count_update" AFTER UPDATE ON "ledger_entries" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_update();--> statement-breakpoint
CREATE TRIGGER "ledger_entries_count_delete" AFTER DELETE ON "ledger_entries" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_delete();
--> statement-breakpoint
-- The landing's request parameters once: raw_params holds each distinct set, and every call row
-- points at it (params_id) instead of carrying its own copy. The views raw_answers and
-- console.raw_answers join them back: they read as before.
CREATE TABLE "raw_params" (
	"id" serial PRIMARY KEY NOT NULL,
	"key" "bytea" NOT NULL,
	"params" jsonb NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "raw_params_key" ON "raw_params" USING btree ("key");--> statement-breakpoint
CREATE INDEX "raw_params_date_idx" ON "raw_params" USING btree (("params"->>'date')) WHERE ("raw_params"."params"->>'date') is not null;--> statement-breakpoint
-- The parameters' row: found by their key, or added (concurrent landings of the same parameters
-- meet on the unique key and both get its one row).
CREATE FUNCTION "daybook_raw_params"(p_params jsonb) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  k bytea := sha256(convert_to(p_params::text, 'UTF8'));
  s integer;
BEGIN
  SELECT id INTO s FROM raw_params WHERE key = k;
  IF s IS NULL THEN
    INSERT INTO raw_params (key, params) VALUES (k, p_params) ON CONFLICT (key) DO NOTHING RETURNING id INTO s;
    IF s IS NULL THEN
      SELECT id INTO s FROM raw_params WHERE key = k;
    END IF;
  END IF;
  RETURN s;
END
$$;--> statement-breakpoint
INSERT INTO raw_params (key, params)
SELECT DISTINCT sha256(convert_to(params::text, 'UTF8')), params FROM raw_responses
ON CONFLICT (key) DO NOTHING;--> statement-breakpoint
ALTER TABLE "raw_responses" ADD COLUMN "params_id" integer;--> statement-breakpoint
UPDATE raw_responses r SET params_id = p.id FROM raw_params p
WHERE p.key = sha256(convert_to(r.params::text, 'UTF8'));--> statement-breakpoint
ALTER TABLE "raw_responses" ALTER COLUMN "params_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "raw_responses" ADD CONSTRAINT "raw_responses_params_id_raw_params_id_fk" FOREIGN KEY ("params_id") REFERENCES "public"."raw_params"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
DROP INDEX "raw_responses_list_date_idx";--> statement-breakpoint
CREATE INDEX "raw_responses_product_params_idx" ON "raw_responses" USING btree ("params_id") WHERE "raw_responses"."operation" = 'product-listing';--> statement-breakpoint
DROP VIEW "raw_answers";--> statement-breakpoint
DROP VIEW console.raw_answers;--> statement-breakpoint
ALTER TABLE "raw_responses" DROP COLUMN "params";--> statement-breakpoint
-- The landing as one row per call with its parameters and body, for reading (daybook's own code,
-- and anyone with SQL on the database); never written to. Left joins (every call has its
-- parameters) let a query that reads neither skip them.
CREATE VIEW "raw_answers" AS
SELECT "r"."id", "r"."run_id", "r"."operation", "p"."params", "r"."http_status", "b"."body_json", "b"."body_text",
       "b"."body_bytes", encode("b"."sha256", 'hex') AS "sha256", "r"."outcome", "r"."cycle", "r"."fetched_at",
       "r"."landed_at", "r"."duration_ms", "r"."body_id"
FROM "raw_responses" "r" LEFT JOIN "raw_params" "p" ON "p"."id" = "r"."params_id"
LEFT JOIN "raw_bodies" "b" ON "b"."id" = "r"."body_id";--> statement-breakpoint
CREATE VIEW console.raw_answers AS
SELECT r.id, r.operation, p.params, r.http_status, r.outcome, r.cycle, r.fetched_at, r.landed_at,
  r.duration_ms, b.body_json, b.body_text, b.body_bytes IS NOT NULL AS has_bytes
FROM raw_responses r
LEFT JOIN raw_params p ON p.id = r.params_id
LEFT JOIN raw_bodies b ON b.id = r.body_id;
