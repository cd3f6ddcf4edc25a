CREATE TABLE "metric_counts" (
	"metric" text NOT NULL,
	"a" text DEFAULT '' NOT NULL,
	"b" text DEFAULT '' NOT NULL,
	"shard" smallint NOT NULL,
	"n" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "metric_counts_metric_a_b_shard_pk" PRIMARY KEY("metric","a","b","shard")
);
--> statement-breakpoint
-- Adds `delta` to a count (a shard per writing connection; the counts of one statement in key
-- order, so two writers never take the same rows in opposite orders).
CREATE FUNCTION daybook_metric_add(p_metric text, p_rows jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO metric_counts (metric, a, b, shard, n)
  SELECT p_metric, coalesce(x->>'a', ''), coalesce(x->>'b', ''), (pg_backend_pid() % 8)::smallint, (x->>'n')::bigint
  FROM jsonb_array_elements(p_rows) x
  WHERE (x->>'n')::bigint <> 0
  ORDER BY 2, 3
  ON CONFLICT (metric, a, b, shard) DO UPDATE SET n = metric_counts.n + excluded.n
$$;--> statement-breakpoint
CREATE FUNCTION daybook_count_raw_responses() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM daybook_metric_add('upstream_requests', (
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', operation, 'b', outcome, 'n', n)), '[]')
    FROM (SELECT operation, outcome, count(*) AS n FROM new_rows GROUP BY 1, 2) g));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "raw_responses_count" AFTER INSERT ON "raw_responses" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_raw_responses();--> statement-breakpoint
-- Credits by cycle: every booking and every change of one (a presumed call proved billed, or not).
CREATE FUNCTION daybook_count_credits_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM daybook_metric_add('credits', (
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', cycle::text, 'n', n)), '[]')
    FROM (SELECT cycle, sum(credits) AS n FROM new_rows GROUP BY 1) g));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION daybook_count_credits_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM daybook_metric_add('credits', (
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', cycle::text, 'n', n)), '[]')
    FROM (SELECT cycle, sum(c) AS n FROM (
      SELECT cycle, credits AS c FROM new_rows UNION ALL SELECT cycle, -credits FROM old_rows) d GROUP BY 1) g));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION daybook_count_credits_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM daybook_metric_add('credits', (
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', cycle::text, 'n', -n)), '[]')
    FROM (SELECT cycle, sum(credits) AS n FROM old_rows GROUP BY 1) g));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "credit_ledger_count_insert" AFTER INSERT ON "credit_ledger" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_insert();--> statement-breakpoint
CREATE TRIGGER "credit_ledger_count_update" AFTER UPDATE ON "credit_ledger" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_update();--> statement-breakpoint
CREATE TRIGGER "credit_ledger_count_delete" AFTER DELETE ON "credit_ledger" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_credits_delete();--> statement-breakpoint
-- Versions, changes and webhook attempts, by one label (TG_ARGV: the metric, the label column, the
-- label's fixed value when it has no column).
CREATE FUNCTION daybook_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sign int := CASE WHEN TG_OP = 'DELETE' THEN -1 ELSE 1 END;
  counted jsonb;
BEGIN
  IF TG_ARGV[1] = '' THEN
    IF TG_OP = 'DELETE' THEN
      SELECT jsonb_build_array(jsonb_build_object('a', TG_ARGV[2], 'n', -count(*))) INTO counted FROM old_rows;
    ELSE
      SELECT jsonb_build_array(jsonb_build_object('a', TG_ARGV[2], 'n', count(*))) INTO counted FROM new_rows;
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE format('SELECT coalesce(jsonb_agg(jsonb_build_object(''a'', k, ''n'', -n)), ''[]'') FROM (SELECT %I AS k, count(*) AS n FROM old_rows GROUP BY 1) g', TG_ARGV[1]) INTO counted;
  ELSE
    EXECUTE format('SELECT coalesce(jsonb_agg(jsonb_build_object(''a'', k, ''n'', n)), ''[]'') FROM (SELECT %I AS k, count(*) AS n FROM new_rows GROUP BY 1) g', TG_ARGV[1]) INTO counted;
  END IF;
  PERFORM daybook_metric_add(TG_ARGV[0], counted);
  RETURN NULL;
END $$;--> statement-breakpoint
-- A table emptied (a rebuild truncates what it derives again) starts its count again.
CREATE FUNCTION daybook_count_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_ARGV[1] = '' THEN
    DELETE FROM metric_counts WHERE metric = TG_ARGV[0] AND a = TG_ARGV[2];
  ELSE
    DELETE FROM metric_counts WHERE metric = TG_ARGV[0];
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "enterprise_versions_count" AFTER INSERT ON "enterprise_versions" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('versions', '', 'enterprise');--> statement-breakpoint
CREATE TRIGGER "enterprise_versions_count_delete" AFTER DELETE ON "enterprise_versions" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('versions', '', 'enterprise');--> statement-breakpoint
CREATE TRIGGER "enterprise_versions_count_reset" AFTER TRUNCATE ON "enterprise_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_reset('versions', '', 'enterprise');--> statement-breakpoint
CREATE TRIGGER "product_versions_count" AFTER INSERT ON "product_versions" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('versions', '', 'product');--> statement-breakpoint
CREATE TRIGGER "product_versions_count_delete" AFTER DELETE ON "product_versions" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('versions', '', 'product');--> statement-breakpoint
CREATE TRIGGER "product_versions_count_reset" AFTER TRUNCATE ON "product_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_reset('versions', '', 'product');--> statement-breakpoint
CREATE TRIGGER "enterprise_changes_count" AFTER INSERT ON "enterprise_changes" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('changes', 'severity');--> statement-breakpoint
CREATE TRIGGER "enterprise_changes_count_delete" AFTER DELETE ON "enterprise_changes" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('changes', 'severity');--> statement-breakpoint
CREATE TRIGGER "enterprise_changes_count_reset" AFTER TRUNCATE ON "enterprise_changes"
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_reset('changes', 'severity');--> statement-breakpoint
CREATE TRIGGER "webhook_deliveries_count" AFTER INSERT ON "webhook_deliveries" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('webhook_attempts', 'outcome');--> statement-breakpoint
CREATE TRIGGER "webhook_deliveries_count_delete" AFTER DELETE ON "webhook_deliveries" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_rows('webhook_attempts', 'outcome');--> statement-breakpoint
CREATE TRIGGER "webhook_deliveries_count_reset" AFTER TRUNCATE ON "webhook_deliveries"
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_reset('webhook_attempts', 'outcome');--> statement-breakpoint
-- The delivery queue by state: rows come, change state, and go.
CREATE FUNCTION daybook_count_delivery_queue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', state, 'n', n)), '[]') INTO counted
    FROM (SELECT state, count(*) AS n FROM new_rows GROUP BY 1) g;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', state, 'n', -n)), '[]') INTO counted
    FROM (SELECT state, count(*) AS n FROM old_rows GROUP BY 1) g;
  ELSE
    SELECT coalesce(jsonb_agg(jsonb_build_object('a', state, 'n', n)), '[]') INTO counted
    FROM (SELECT state, sum(n) AS n FROM (
      SELECT state, count(*) AS n FROM new_rows GROUP BY 1
      UNION ALL SELECT state, -count(*) FROM old_rows GROUP BY 1) d GROUP BY 1) g;
  END IF;
  PERFORM daybook_metric_add('delivery_queue', counted);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "delivery_queue_count_insert" AFTER INSERT ON "delivery_queue" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_delivery_queue();--> statement-breakpoint
CREATE TRIGGER "delivery_queue_count_update" AFTER UPDATE ON "delivery_queue" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_delivery_queue();--> statement-breakpoint
CREATE TRIGGER "delivery_queue_count_delete" AFTER DELETE ON "delivery_queue" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_delivery_queue();--> statement-breakpoint
CREATE TRIGGER "delivery_queue_count_reset" AFTER TRUNCATE ON "delivery_queue"
  FOR EACH STATEMENT EXECUTE FUNCTION daybook_count_reset('delivery_queue', 'state');--> statement-breakpoint
-- What is there already, counted once.
INSERT INTO metric_counts (metric, a, b, shard, n)
SELECT 'upstream_requests', operation, outcome, 0, count(*) FROM raw_responses GROUP BY 2, 3
UNION ALL SELECT 'credits', cycle::text, '', 0, sum(credits) FROM credit_ledger GROUP BY 2
UNION ALL SELECT 'versions', 'enterprise', '', 0, count(*) FROM enterprise_versions
UNION ALL SELECT 'versions', 'product', '', 0, count(*) FROM product_versions
UNION ALL SELECT 'changes', severity, '', 0, count(*) FROM enterprise_changes GROUP BY 2
UNION ALL SELECT 'webhook_attempts', outcome, '', 0, count(*) FROM webhook_deliveries GROUP BY 2
UNION ALL SELECT 'delivery_queue', state, '', 0, count(*) FROM delivery_queue GROUP BY 2;
