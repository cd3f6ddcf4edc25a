-- The `published` schema: what a table's owner lets the rest of daybook read, one view per need.
-- Code names a table only in its owner's folder (docs/architecture.md, "One owner per table");
-- another module reads these views, or calls a function of the owner. They are internal: not
-- part of the SQL contract (the analytics views are), not granted to the sql reader.
CREATE SCHEMA IF NOT EXISTS published;
--> statement-breakpoint
REVOKE ALL ON SCHEMA published FROM PUBLIC;
--> statement-breakpoint
-- Owner src/watch/store.ts. The entries and the planner's columns on them: what the plan orders
-- and estimates (src/plan) and what a claim is taken on (src/purchase).
CREATE VIEW published.watch_entries AS
SELECT w.id, w.keyword, w.keyword_key, w.priority, w.active, w.direct, w.shareholder_depth, w.pid,
  w.uscc, w.pin_uscc, w.expected_pid, w.resolution_mismatch, w.added_at, w.last_refreshed_at,
  w.refreshed_cycle, w.last_cycle, w.last_outcome, w.last_error, w.due_at, w.change_history,
  w.change_rate, w.change_weight, w.change_cohort, w.boost_left
FROM watchlist w;
--> statement-breakpoint
-- Owner src/purchase/fetches.ts. Each entry's claim in a cycle: what the plan skips and counts,
-- and what cycle.completed counts (src/events).
CREATE VIEW published.cycle_claims AS
SELECT f.cycle, f.watch_id, f.status, f.pid, f.attempts, f.error_code, f.error_message, f.updated_at
FROM cycle_fetches f;
--> statement-breakpoint
-- Owner src/purchase/credits.ts. A cycle's credits spent, for cycle.completed (src/events).
CREATE VIEW published.cycle_spent AS
SELECT b.cycle, b.spent FROM cycle_budgets b;
--> statement-breakpoint
-- Owner src/history/enterprise-store.ts. A version's name and approval date, by its id: the name
-- and effective date an event about that version carries (src/events).
CREATE VIEW published.enterprise_version_names AS
SELECT v.id, v.pid, v.ent_name, v.appr_date FROM enterprise_versions v;
--> statement-breakpoint
-- Owner src/history/resolution-mismatches.ts. What a refused answer was held to: a retry of the
-- entry expects the same (src/watch).
CREATE VIEW published.refused_answers AS
SELECT m.raw_response_id, m.expected_uscc, m.expected_pid FROM resolution_mismatches m;
