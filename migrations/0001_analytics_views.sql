-- The analytics schema: read-only views that form daybook's SQL contract for users.
-- Column names and meanings here are stable; the tables behind them may change.
CREATE SCHEMA IF NOT EXISTS analytics;
--> statement-breakpoint
CREATE VIEW analytics.enterprise_current AS
SELECT
  v.pid,
  v.ent_name,
  v.history_name,
  v.uncid,
  v.reg_no,
  v.legal_person,
  v.legal_person_desc,
  v.ent_type,
  v.ent_type_code,
  v.ent_status,
  v.reg_cap,
  v.capital_unit,
  v.capital_currency,
  v.capital_amount,
  v.capital_text,
  v.province,
  v.es_date,
  v.op_from,
  v.operating_to,
  v.operating_perpetual,
  v.operating_to_text,
  v.reg_org,
  v.appr_date,
  v.revoke_date,
  v.revoke_reason,
  v.op_loc,
  v.op_scope,
  v.participants,
  v.participants_count,
  v.industry_phy,
  v.industry_big,
  v.industry_middle,
  v.is_listed,
  v.sconform,
  e.presence,
  v.version,
  v.valid_from AS version_valid_from,
  v.cycle AS version_cycle,
  e.first_seen_at,
  e.last_seen_at,
  COALESCE((SELECT jsonb_agg(jsonb_build_object('name', p.name, 'position', p.position) ORDER BY p.ordinal)
            FROM enterprise_persons p WHERE p.version_id = v.id), '[]'::jsonb) AS persons,
  COALESCE((SELECT jsonb_agg(jsonb_build_object('name', s.name, 'type', s.type, 'pid', s.shareholder_pid) ORDER BY s.ordinal)
            FROM enterprise_shareholders s WHERE s.version_id = v.id), '[]'::jsonb) AS shareholders,
  COALESCE((SELECT jsonb_agg(jsonb_build_object('name', c.name, 'position', c.position) ORDER BY c.ordinal)
            FROM enterprise_clearing_members c WHERE c.version_id = v.id), '[]'::jsonb) AS clearing_members,
  v.extra,
  v.raw_response_id
FROM enterprises e
JOIN enterprise_versions v ON v.id = e.current_version_id;
--> statement-breakpoint
CREATE VIEW analytics.enterprise_history AS
SELECT
  v.pid,
  v.version,
  v.valid_from,
  v.valid_to,
  v.is_current,
  v.cycle,
  v.content_hash,
  v.ent_name,
  v.history_name,
  v.uncid,
  v.legal_person,
  v.ent_type,
  v.ent_status,
  v.reg_cap,
  v.capital_unit,
  v.capital_currency,
  v.capital_amount,
  v.province,
  v.operating_to,
  v.operating_perpetual,
  v.revoke_date,
  v.op_loc,
  v.op_scope,
  v.participants_count,
  v.industry_phy,
  v.industry_big,
  v.is_listed,
  (SELECT count(*) FROM enterprise_persons p WHERE p.version_id = v.id)::int AS persons_count,
  (SELECT count(*) FROM enterprise_shareholders s WHERE s.version_id = v.id)::int AS shareholders_count,
  (SELECT count(*) FROM enterprise_clearing_members c WHERE c.version_id = v.id)::int AS clearing_members_count,
  v.extra,
  v.raw_response_id
FROM enterprise_versions v;
--> statement-breakpoint
CREATE VIEW analytics.enterprise_changes AS
SELECT
  c.id AS change_id,
  c.pid,
  cur.ent_name AS current_name,
  c.cycle,
  c.detected_at,
  c.category,
  c.field,
  c.kind,
  c.before,
  c.after,
  c.detail,
  c.severity,
  pv.version AS from_version,
  nv.version AS to_version,
  nv.raw_response_id
FROM enterprise_changes c
JOIN enterprise_versions nv ON nv.id = c.version_id
JOIN enterprise_versions pv ON pv.id = c.previous_version_id
JOIN enterprises e ON e.pid = c.pid
LEFT JOIN enterprise_versions cur ON cur.id = e.current_version_id;
--> statement-breakpoint
CREATE VIEW analytics.enterprise_events AS
SELECT o.id AS event_id, o.pid, o.kind, o.cycle, o.keyword, o.detail, o.observed_at, o.raw_response_id
FROM enterprise_observations o;
--> statement-breakpoint
CREATE VIEW analytics.product_current AS
SELECT
  p.product_id,
  v.record_id,
  v.name,
  v.tagline,
  v.description,
  v.url,
  v.created_at,
  v.featured_at,
  v.thumbnail_url,
  COALESCE((SELECT array_agg(t.topic ORDER BY t.topic) FROM product_topics t WHERE t.version_id = v.id), '{}') AS topics,
  s.votes_count AS latest_votes,
  s.comments_count AS latest_comments,
  s.fetched_at AS latest_snapshot_at,
  (SELECT min(ts.list_date) FROM trending_snapshots ts WHERE ts.product_id = p.product_id) AS first_list_date,
  (SELECT count(*) FROM product_comments pc WHERE pc.product_id = p.product_id)::int AS comments_kept,
  v.version,
  p.first_seen_at,
  p.last_seen_at,
  v.extra
FROM products p
JOIN product_versions v ON v.id = p.current_version_id
LEFT JOIN LATERAL (
  SELECT ts.votes_count, ts.comments_count, ts.fetched_at
  FROM trending_snapshots ts WHERE ts.product_id = p.product_id
  ORDER BY ts.fetched_at DESC, ts.id DESC LIMIT 1
) s ON true;
--> statement-breakpoint
CREATE VIEW analytics.product_trending AS
SELECT
  ts.list_date,
  ts.position,
  ts.product_id,
  v.name,
  v.tagline,
  ts.votes_count,
  ts.comments_count,
  ts.fetched_at,
  ts.raw_response_id = first_value(ts.raw_response_id)
    OVER (PARTITION BY ts.list_date ORDER BY ts.fetched_at DESC, ts.raw_response_id DESC) AS is_latest_pull,
  ts.raw_response_id
FROM trending_snapshots ts
JOIN products p ON p.product_id = ts.product_id
LEFT JOIN product_versions v ON v.id = p.current_version_id;
--> statement-breakpoint
CREATE VIEW analytics.credit_usage AS
SELECT
  l.cycle,
  l.operation,
  count(*)::int AS billed_queries,
  sum(l.credits)::int AS credits,
  count(DISTINCT l.pid)::int AS distinct_enterprises,
  min(l.billed_at) AS first_billed_at,
  max(l.billed_at) AS last_billed_at
FROM credit_ledger l
GROUP BY l.cycle, l.operation;
--> statement-breakpoint
CREATE VIEW analytics.runs AS
SELECT
  r.id AS run_id,
  r.kind,
  r.cycle,
  r.list_date,
  r.entity,
  r.started_at,
  r.finished_at,
  r.finished_at - r.started_at AS duration,
  r.outcome,
  r.error_code,
  r.error_message,
  r.counts,
  r.credits
FROM runs r;
