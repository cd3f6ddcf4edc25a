-- Loads a folder of daybook export packages (Parquet) into DuckDB, and defines the views a
-- warehouse queries: the same rows as daybook's analytics views of the same name.
--
--   duckdb warehouse.duckdb -c "SET VARIABLE export_dir = '/data/daybook-export'" -c ".read docs/recipes/duckdb-load.sql"
--
-- Run it again after every export: it reads every complete package (one with a manifest.json)
-- from the latest full package on, and keeps, for every key, the row of the newest package.
-- daybook's test suite runs this file as it is (test/export/consumer.test.ts).

SET TimeZone = 'UTC';

CREATE OR REPLACE TEMP TABLE daybook_packages AS
SELECT load_id, load_no, kind
FROM read_json(getvariable('export_dir') || '/load_id=*/manifest.json',
               columns = {load_id: 'VARCHAR', load_no: 'INTEGER', kind: 'VARCHAR'});

-- A full package holds everything up to its cut: the packages before it are not needed.
CREATE OR REPLACE TEMP TABLE daybook_live AS
SELECT load_id FROM daybook_packages
WHERE load_no >= (SELECT coalesce(max(load_no), 0) FROM daybook_packages WHERE kind = 'full');

-- The rows of one table in the packages that count, each with the load_id of its package.
CREATE OR REPLACE MACRO daybook_rows(t) AS TABLE
SELECT f.* EXCLUDE (filename), regexp_extract(f.filename, 'load_id=([0-9]+)', 1) AS load_id
FROM read_parquet(getvariable('export_dir') || '/load_id=*/' || t || '.parquet',
                  filename = true, hive_partitioning = false) f
WHERE regexp_extract(f.filename, 'load_id=([0-9]+)', 1) IN (SELECT load_id FROM daybook_live);

-- ---- tables: the newest row of every key ---------------------------------------------------

CREATE OR REPLACE TABLE enterprise_versions AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_versions')
QUALIFY row_number() OVER (PARTITION BY pid, version ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE enterprise_persons AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_persons')
QUALIFY row_number() OVER (PARTITION BY pid, version, ordinal ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE enterprise_shareholders AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_shareholders')
QUALIFY row_number() OVER (PARTITION BY pid, version, ordinal ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE enterprise_clearing_members AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_clearing_members')
QUALIFY row_number() OVER (PARTITION BY pid, version, ordinal ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE enterprise_sightings AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_sightings')
QUALIFY row_number() OVER (PARTITION BY sighting_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE enterprise_change_log AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_changes')
QUALIFY row_number() OVER (PARTITION BY change_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE enterprise_events AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('enterprise_events')
QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE events AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('events')
QUALIFY row_number() OVER (PARTITION BY sequence ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE product_versions AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('product_versions')
QUALIFY row_number() OVER (PARTITION BY product_id, version ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE product_topics AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('product_topics')
QUALIFY row_number() OVER (PARTITION BY product_id, version, topic ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE product_media AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('product_media')
QUALIFY row_number() OVER (PARTITION BY product_id, version, position ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE product_links AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('product_links')
QUALIFY row_number() OVER (PARTITION BY product_id, version, position ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE product_sightings AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('product_sightings')
QUALIFY row_number() OVER (PARTITION BY sighting_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE product_comments AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('product_comments')
QUALIFY row_number() OVER (PARTITION BY comment_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE trending_snapshots AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('trending_snapshots')
QUALIFY row_number() OVER (PARTITION BY snapshot_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE credits AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('credits')
QUALIFY row_number() OVER (PARTITION BY entry_id ORDER BY load_id DESC) = 1;

CREATE OR REPLACE TABLE runs AS
SELECT * EXCLUDE (load_id) FROM daybook_rows('runs')
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY load_id DESC) = 1;

-- ---- views: what daybook's analytics views show ---------------------------------------------

-- The state of each enterprise: its latest sighting.
CREATE OR REPLACE VIEW enterprise_state AS
SELECT * FROM enterprise_sightings
QUALIFY row_number() OVER (PARTITION BY pid ORDER BY sighting_id DESC) = 1;

CREATE OR REPLACE VIEW enterprise_history AS
SELECT
  v.*,
  (SELECT count(*) FROM enterprise_persons p WHERE p.pid = v.pid AND p.version = v.version)::INTEGER AS persons_count,
  (SELECT count(*) FROM enterprise_shareholders s WHERE s.pid = v.pid AND s.version = v.version)::INTEGER AS shareholders_count,
  (SELECT count(*) FROM enterprise_clearing_members m WHERE m.pid = v.pid AND m.version = v.version)::INTEGER AS clearing_members_count,
  coalesce((SELECT to_json(list({'name': p.name, 'position': p.position} ORDER BY p.ordinal))
            FROM enterprise_persons p WHERE p.pid = v.pid AND p.version = v.version), '[]'::JSON) AS persons,
  coalesce((SELECT to_json(list({'name': s.name, 'type': s.type, 'pid': s.shareholder_pid} ORDER BY s.ordinal))
            FROM enterprise_shareholders s WHERE s.pid = v.pid AND s.version = v.version), '[]'::JSON) AS shareholders,
  coalesce((SELECT to_json(list({'name': m.name, 'position': m.position} ORDER BY m.ordinal))
            FROM enterprise_clearing_members m WHERE m.pid = v.pid AND m.version = v.version), '[]'::JSON) AS clearing_members
FROM enterprise_versions v;

CREATE OR REPLACE VIEW enterprise_current AS
SELECT
  h.* EXCLUDE (version, valid_from, valid_to, is_current, cycle, content_hash, persons_count, shareholders_count, clearing_members_count),
  s.presence,
  h.version,
  h.valid_from AS version_valid_from,
  h.cycle AS version_cycle,
  s.first_seen_at,
  s.last_seen_at
FROM enterprise_state s
JOIN enterprise_history h ON h.pid = s.pid AND h.version = s.version;

CREATE OR REPLACE VIEW enterprise_changes AS
SELECT c.*, cur.ent_name AS current_name
FROM enterprise_change_log c
LEFT JOIN enterprise_state s ON s.pid = c.pid
LEFT JOIN enterprise_versions cur ON cur.pid = s.pid AND cur.version = s.version;

CREATE OR REPLACE VIEW product_state AS
SELECT * FROM product_sightings
QUALIFY row_number() OVER (PARTITION BY product_id ORDER BY sighting_id DESC) = 1;

CREATE OR REPLACE VIEW product_current AS
SELECT
  v.product_id, v.record_id, v.name, v.tagline, v.description, v.url, v.created_at, v.featured_at, v.thumbnail_url,
  coalesce((SELECT list(t.topic ORDER BY t.topic) FROM product_topics t
            WHERE t.product_id = v.product_id AND t.version = v.version), []::VARCHAR[]) AS topics,
  latest.votes_count AS latest_votes,
  latest.comments_count AS latest_comments,
  latest.fetched_at AS latest_snapshot_at,
  (SELECT min(ts.list_date) FROM trending_snapshots ts WHERE ts.product_id = v.product_id) AS first_list_date,
  (SELECT count(*) FROM product_comments pc WHERE pc.product_id = v.product_id)::INTEGER AS comments_kept,
  v.version,
  s.first_seen_at,
  s.last_seen_at,
  v.extra
FROM product_state s
JOIN product_versions v ON v.product_id = s.product_id AND v.version = s.version
LEFT JOIN (
  SELECT * FROM trending_snapshots
  QUALIFY row_number() OVER (PARTITION BY product_id ORDER BY fetched_at DESC, snapshot_id DESC) = 1
) latest ON latest.product_id = v.product_id;

CREATE OR REPLACE VIEW product_trending AS
SELECT
  ts.list_date, ts.position, ts.product_id, v.name, v.tagline, ts.votes_count, ts.comments_count, ts.fetched_at,
  ts.raw_response_id = first_value(ts.raw_response_id)
    OVER (PARTITION BY ts.list_date ORDER BY ts.fetched_at DESC, ts.raw_response_id DESC) AS is_latest_pull,
  ts.raw_response_id
FROM trending_snapshots ts
LEFT JOIN product_state s ON s.product_id = ts.product_id
LEFT JOIN product_versions v ON v.product_id = s.product_id AND v.version = s.version;

CREATE OR REPLACE VIEW credit_usage AS
SELECT
  cycle,
  operation,
  (count(*) FILTER (WHERE status = 'booked'))::INTEGER AS billed_queries,
  coalesce(sum(credits), 0)::INTEGER AS credits,
  (count(DISTINCT pid) FILTER (WHERE status = 'booked'))::INTEGER AS distinct_enterprises,
  min(billed_at) AS first_billed_at,
  max(billed_at) AS last_billed_at,
  coalesce(sum(credits) FILTER (WHERE status = 'booked'), 0)::INTEGER AS booked_credits,
  coalesce(sum(credits) FILTER (WHERE status = 'presumed'), 0)::INTEGER AS presumed_credits,
  (count(*) FILTER (WHERE status = 'presumed'))::INTEGER AS presumed_queries,
  coalesce(sum(credits) FILTER (WHERE status = 'unconfirmed'), 0)::INTEGER AS unconfirmed_credits,
  (count(*) FILTER (WHERE status = 'unconfirmed'))::INTEGER AS unconfirmed_queries,
  -- An unpriced product call has credits null: counted here, in no sum.
  (count(*) FILTER (WHERE credits IS NULL))::INTEGER AS unpriced_queries
FROM credits
GROUP BY cycle, operation;
