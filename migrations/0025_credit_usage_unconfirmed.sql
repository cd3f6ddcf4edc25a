-- analytics.credit_usage reads the ledger's third status and its unpriced calls (migration 0024).
-- `credits`, what the budget counts, is booked + presumed + unconfirmed, 0 rather than null when
-- every entry of the group is unpriced; the new columns come last (a view keeps its columns).
CREATE OR REPLACE VIEW analytics.credit_usage AS
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
GROUP BY l.cycle, l.operation;
