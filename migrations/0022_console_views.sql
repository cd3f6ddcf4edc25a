-- The `console` schema: what the web console (/ui/, src/console/) reads besides the analytics
-- views, as views running with their owner's rights. It is not part of the SQL contract (the
-- analytics views are): the console may change it with each release. Secrets stay out: no
-- subscription URL or secret, no API key (never stored), no sql reader password.
CREATE SCHEMA IF NOT EXISTS console;
--> statement-breakpoint
REVOKE ALL ON SCHEMA console FROM PUBLIC;
--> statement-breakpoint
CREATE VIEW console.cycle_budgets AS
SELECT b.cycle, b.budget, b.reserved, b.spent, b.paused_at, b.paused_reason
FROM cycle_budgets b;
--> statement-breakpoint
CREATE VIEW console.cycle_fetches AS
SELECT f.cycle, f.watch_id, w.keyword, f.status, f.pid, f.attempts, f.credits_billed,
  f.error_code, f.error_message, f.updated_at
FROM cycle_fetches f
LEFT JOIN watchlist w ON w.id = f.watch_id;
--> statement-breakpoint
CREATE VIEW console.rate_limits AS
SELECT r.operation, cardinality(r.calls) AS calls_in_window, r.blocked_until, r.refusals
FROM rate_limits r;
--> statement-breakpoint
CREATE VIEW console.metric_counts AS
SELECT m.metric, m.a, m.b, sum(m.n)::bigint AS n
FROM metric_counts m
GROUP BY m.metric, m.a, m.b;
--> statement-breakpoint
CREATE VIEW console.exports AS
SELECT x.id, x.load_no, x.load_id, x.kind, x.format, x.state, x.rows, x.bytes, x.started_at, x.completed_at
FROM exports x;
--> statement-breakpoint
CREATE VIEW console.subscriptions AS
SELECT s.id, s.format, s.lang, s.state, s.disabled_reason, s.failing_since, s.cursor_seq, s.created_at
FROM subscriptions s;
--> statement-breakpoint
CREATE VIEW console.watchlist AS
SELECT w.id, w.keyword, w.priority, w.active, w.pid, w.added_at, w.last_refreshed_at,
  w.refreshed_cycle, w.last_cycle, w.last_outcome, w.last_error, w.uscc, w.pin_uscc,
  w.resolution_mismatch, w.due_at, w.change_rate, w.change_weight, w.change_cohort, w.boost_left
FROM watchlist w;
--> statement-breakpoint
CREATE VIEW console.planner_state AS
SELECT p.scale, p.cycle, p.capacity, p.entries, p.updated_at FROM planner_state p;
--> statement-breakpoint
-- Every name and former name a company had, one row per version: what the search reads.
CREATE VIEW console.enterprise_names AS
SELECT v.pid, v.version, v.ent_name, v.history_name, v.uncid FROM enterprise_versions v;
--> statement-breakpoint
CREATE VIEW console.raw_answers AS
SELECT r.id, r.operation, r.params, r.http_status, r.outcome, r.cycle, r.fetched_at, r.landed_at,
  r.duration_ms, b.body_json, b.body_text, b.body_bytes IS NOT NULL AS has_bytes
FROM raw_responses r
LEFT JOIN raw_bodies b ON b.id = r.body_id;
--> statement-breakpoint
CREATE VIEW console.product_pulls AS
SELECT ts.product_id, ts.list_date, ts.position, ts.votes_count, ts.comments_count, ts.fetched_at,
  ts.raw_response_id
FROM trending_snapshots ts;
--> statement-breakpoint
CREATE VIEW console.product_comments AS
SELECT c.id, c.product_id, c.body, c.created_at, c.created_at_text, c.first_seen_at
FROM product_comments c;
--> statement-breakpoint
-- The sql reader (migration 0007) reads the console views too: the function that keeps its grants
-- now grants both schemas.
CREATE OR REPLACE FUNCTION "daybook_sql_reader_ensure"() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  stored record;
  reader text;
  secret text;
  obj oid;
  sch text;
BEGIN
  -- One at a time in a database: two GRANTs of the same object at once can fail.
  PERFORM pg_advisory_xact_lock(hashtext('daybook_sql_reader_ensure'));
  SELECT s.role, s.password INTO stored FROM public.sql_reader s;
  reader := coalesce(stored.role, 'daybook_sql_' || left(md5(current_database()), 12));
  IF stored.role IS NULL OR NOT EXISTS (SELECT FROM pg_roles WHERE rolname = reader) THEN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
      RETURN NULL;
    END IF;
    -- A restored database keeps its password; a new one gets 256 random bits.
    secret := coalesce(stored.password,
      replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''));
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = reader) THEN
      -- Left by a database of the same name, dropped since: made ours again.
      EXECUTE format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS PASSWORD %L', reader, secret);
    ELSE
      EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS PASSWORD %L', reader, secret);
    END IF;
    EXECUTE format('ALTER ROLE %I SET default_transaction_read_only = on', reader);
    EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', reader, '5min');
    INSERT INTO public.sql_reader (id, role, password) VALUES (true, reader, secret)
      ON CONFLICT (id) DO UPDATE SET role = excluded.role, password = excluded.password;
  END IF;
  -- Each grant only when missing: most runs change nothing. CONNECT is granted explicitly, not
  -- left to PUBLIC's (which a hardened server revokes); a clone of this database starts without.
  IF NOT EXISTS (
    SELECT FROM pg_database d, aclexplode(d.datacl) a
    WHERE d.datname = current_database() AND a.privilege_type = 'CONNECT'
      AND a.grantee = (SELECT oid FROM pg_roles WHERE rolname = reader)
  ) THEN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), reader);
  END IF;
  FOREACH sch IN ARRAY ARRAY['analytics', 'console'] LOOP
    CONTINUE WHEN to_regnamespace(sch) IS NULL;
    IF NOT has_schema_privilege(reader, sch, 'USAGE') THEN
      EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', sch, reader);
    END IF;
    FOR obj IN
      SELECT c.oid FROM pg_class c
      WHERE c.relnamespace = to_regnamespace(sch) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
        AND NOT has_table_privilege(reader, c.oid, 'SELECT')
    LOOP
      EXECUTE format('GRANT SELECT ON %s TO %I', obj::regclass, reader);
    END LOOP;
  END LOOP;
  RETURN reader;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "daybook_sql_reader_ensure"() FROM PUBLIC;
--> statement-breakpoint
SELECT "daybook_sql_reader_ensure"();
