-- The booked enterprise entries of compacted cycles, in one narrow row each. Once a cycle is past
-- DAYBOOK_BOOKKEEPING_DAYS its claims are gone (cycle_fetches is compacted), so no call of it can
-- be settled or presumed again: what keeps an entry unique while its cycle runs (the
-- (cycle, watch entry, call fence) key) and finds it by id or answer is no longer needed. The
-- compaction moves such an entry, with its id, every value and its load_xid as they were, from
-- ledger_entries to ledger_compacted, which has no unique index to keep and narrower columns (a
-- watch entry's id in 4 bytes, a claim's fence and the credits in 2; an entry whose values do not
-- fit stays where it is); the view credit_ledger reads both, so every reader reads the same rows
-- as before.
CREATE TABLE "ledger_compacted" (
	"id" bigint NOT NULL,
	"run_id" bigint NOT NULL,
	"raw_response_id" bigint NOT NULL,
	"billed_at" timestamp with time zone NOT NULL,
	"load_xid" "xid8" NOT NULL,
	"cycle" date NOT NULL,
	"watch_id" integer NOT NULL,
	"subject_id" integer NOT NULL,
	"call_fence" smallint NOT NULL,
	"credits" smallint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_compacted" ADD CONSTRAINT "ledger_compacted_subject_id_ledger_subjects_id_fk" FOREIGN KEY ("subject_id") REFERENCES "public"."ledger_subjects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- The export's cursor (rows written in a range of transactions; a compacted entry keeps the
-- transaction that wrote it, so it is never exported twice).
CREATE INDEX "ledger_compacted_load_xid_idx" ON "ledger_compacted" USING btree ("load_xid");--> statement-breakpoint
-- Rows arrive a cycle at a time, in cycle order: a block range index finds a cycle's entries.
CREATE INDEX "ledger_compacted_cycle_brin" ON "ledger_compacted" USING brin ("cycle");--> statement-breakpoint
-- The credits metric counts an entry once: the move takes it from ledger_entries' count and
-- gives it to this table's.
CREATE TRIGGER "ledger_compacted_count_insert" AFTER INSERT ON "ledger_compacted" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_insert();--> statement-breakpoint
CREATE TRIGGER "ledger_compacted_count_update" AFTER UPDATE ON "ledger_compacted" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_update();--> statement-breakpoint
CREATE TRIGGER "ledger_compacted_count_delete" AFTER DELETE ON "ledger_compacted" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_delete();--> statement-breakpoint
-- The ledger as it reads: the same columns, types and rows as before, the compacted entries
-- (all booked) after the live ones. Each branch joins the words on their key, so a query that
-- reads no word skips the join, and a filter on a column goes down both branches.
CREATE OR REPLACE VIEW credit_ledger AS
SELECT e.id, e.cycle, s.operation, s.pid, s.keyword, e.credits, s.remark, e.run_id, e.raw_response_id,
       e.billed_at, e.status, e.watch_id, e.call_fence, e.load_xid
FROM ledger_entries e LEFT JOIN ledger_subjects s ON s.id = e.subject_id
UNION ALL
SELECT c.id, c.cycle, s.operation, s.pid, s.keyword, c.credits::integer, s.remark, c.run_id, c.raw_response_id,
       c.billed_at, 'booked'::text, c.watch_id::bigint, c.call_fence::bigint, c.load_xid
FROM ledger_compacted c LEFT JOIN ledger_subjects s ON s.id = c.subject_id;
--> statement-breakpoint
-- The cycles compacted before this migration (older than the oldest cycle that has claims left):
-- their booked entries of enterprise calls billed for a successful answer move now, as the
-- compaction moves them from here on.
WITH moved AS (
  DELETE FROM ledger_entries e
  WHERE e.cycle < (SELECT min(cycle) FROM cycle_fetches)
    AND e.status = 'booked' AND e.watch_id IS NOT NULL AND e.call_fence IS NOT NULL
    AND e.run_id IS NOT NULL AND e.raw_response_id IS NOT NULL AND e.credits IS NOT NULL
    AND e.watch_id BETWEEN 1 AND 2147483647 AND e.call_fence BETWEEN 0 AND 32767 AND e.credits BETWEEN 0 AND 32767
    AND (SELECT r.outcome FROM raw_responses r WHERE r.id = e.raw_response_id) = 'success'
  RETURNING id, run_id, raw_response_id, billed_at, load_xid, cycle, watch_id, call_fence, subject_id, credits)
INSERT INTO ledger_compacted (id, run_id, raw_response_id, billed_at, load_xid, cycle, watch_id, call_fence,
                              subject_id, credits)
SELECT id, run_id, raw_response_id, billed_at, load_xid, cycle, watch_id, call_fence, subject_id, credits
FROM moved ORDER BY cycle, id;
