-- Related parties (issue: the ownership and people graph). analytics.enterprise_links: one row per
-- link of a watched company and per span of versions in which it held, read from history, so any
-- past day can be asked. A link is to an enterprise shareholder (by its PID) or to a person (by
-- name only: the upstream gives no person id, so two persons of one name are never merged).
--
-- A version is "the version of day D" when it is the latest version whose cycle is on or before D
-- (what the console's ?at= shows). A span's days are [valid_from_cycle, valid_to_cycle): the cycle
-- of its first version, and the earliest cycle of any version after its last one (null while the
-- link is in the current version). A link held only by a version superseded the same day has
-- valid_from_cycle = valid_to_cycle: it held on no day's end, and its valid_from/valid_to say when.
--
-- The view is written so that a filter on pid, relation, related_kind, related_pid, related_name or
-- position reaches the tables' indexes (each is a partition and grouping key, and the cycle after
-- a version is a per-row lookup rather than a window over every version).
CREATE VIEW analytics.enterprise_links AS
WITH version_links AS (
  SELECT DISTINCT x.*
  FROM (
    SELECT v.pid, 'shareholder'::text AS relation,
      CASE
        WHEN s.shareholder_pid IS NOT NULL THEN 'enterprise'
        WHEN s.type LIKE '%自然人%' OR s.type = '华侨' THEN 'person'
        WHEN s.type IS NULL OR s.type IN ('', '其他投资者') THEN 'unknown'
        ELSE 'organisation'
      END AS related_kind,
      s.shareholder_pid AS related_pid, s.name AS related_name, s.type AS position,
      v.version, v.cycle, v.valid_from, v.valid_to, v.is_current
    FROM enterprise_versions v JOIN enterprise_shareholders s ON s.version_id = v.id
    UNION ALL
    SELECT v.pid, 'legal_representative', 'person', NULL::text, v.legal_person, v.legal_person_desc,
      v.version, v.cycle, v.valid_from, v.valid_to, v.is_current
    FROM enterprise_versions v WHERE v.legal_person IS NOT NULL AND v.legal_person <> ''
    UNION ALL
    SELECT v.pid, 'personnel', 'person', NULL::text, p.name, p.position,
      v.version, v.cycle, v.valid_from, v.valid_to, v.is_current
    FROM enterprise_versions v JOIN enterprise_persons p ON p.version_id = v.id
    UNION ALL
    SELECT v.pid, 'clearing_member', 'person', NULL::text, c.name, c.position,
      v.version, v.cycle, v.valid_from, v.valid_to, v.is_current
    FROM enterprise_versions v JOIN enterprise_clearing_members c ON c.version_id = v.id
  ) x
),
islands AS (
  -- Consecutive versions holding the same link share version - rank.
  SELECT l.*,
    l.version - dense_rank() OVER (
      PARTITION BY l.pid, l.relation, l.related_kind, l.related_pid, l.related_name, l.position
      ORDER BY l.version) AS island
  FROM version_links l
)
SELECT
  i.pid,
  i.relation,
  i.related_kind,
  i.related_pid,
  i.related_name,
  i.position,
  (array_agg(i.cycle ORDER BY i.version))[1] AS valid_from_cycle,
  (SELECT min(w.cycle) FROM enterprise_versions w WHERE w.pid = i.pid AND w.version > max(i.version)) AS valid_to_cycle,
  min(i.valid_from) AS valid_from,
  (array_agg(i.valid_to ORDER BY i.version DESC))[1] AS valid_to,
  bool_or(i.is_current) AS is_current,
  min(i.version)::int AS from_version,
  max(i.version)::int AS to_version
FROM islands i
GROUP BY i.pid, i.relation, i.related_kind, i.related_pid, i.related_name, i.position, i.island;
--> statement-breakpoint
-- The companies related to one company within `depth` hops (1 to 3) as of the end of day `as_of`
-- (today's links when null): each company once, by its shortest path (among equals, a shareholding
-- before a same-name person, then the first in a fixed order). A hop is a shareholding
-- (`shareholder`: the next company holds shares of this one; `holds`: this one holds shares of the
-- next) or a person of the same name in both companies (`same_name`, none when `people` is false).
-- `path` lists the hops from the company asked about, each {"from", "to", "link", "name",
-- "position"}: the shareholder's or the person's name, as the record holding the link gives it.
-- One query per company reached and per person name, each by the tables' indexes.
CREATE FUNCTION analytics.related_companies(company text, as_of date DEFAULT NULL, depth integer DEFAULT 1, people boolean DEFAULT true)
RETURNS TABLE (related_pid text, related_name text, hops integer, link text, path jsonb)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  visited text[] := ARRAY[company];
  frontier jsonb := jsonb_build_array(jsonb_build_object('pid', company, 'path', '[]'::jsonb));
  found jsonb;
  cands jsonb;
  f record;
  h record;
  person record;
  level integer;
  ord integer;
BEGIN
  IF depth IS NULL OR depth < 1 OR depth > 3 THEN
    RAISE EXCEPTION 'depth must be from 1 to 3, got %', coalesce(depth::text, 'null') USING ERRCODE = '22023';
  END IF;
  FOR level IN 1..depth LOOP
    EXIT WHEN jsonb_array_length(frontier) = 0;
    cands := '[]'::jsonb;
    ord := 0;
    FOR f IN SELECT e->>'pid' AS pid, e->'path' AS path FROM jsonb_array_elements(frontier) e LOOP
      ord := ord + 1;
      FOR h IN
        SELECT l.related_pid AS to_pid, 'shareholder' AS link, l.related_name AS name, l.position, 1 AS pref
        FROM analytics.enterprise_links l
        WHERE l.pid = f.pid AND l.relation = 'shareholder' AND l.related_pid IS NOT NULL
          AND ((as_of IS NULL AND l.is_current)
            OR (as_of IS NOT NULL AND l.valid_from_cycle <= as_of AND (l.valid_to_cycle IS NULL OR l.valid_to_cycle > as_of)))
        UNION ALL
        SELECT l.pid, 'holds', l.related_name, l.position, 1
        FROM analytics.enterprise_links l
        WHERE l.related_pid = f.pid AND l.relation = 'shareholder'
          AND ((as_of IS NULL AND l.is_current)
            OR (as_of IS NOT NULL AND l.valid_from_cycle <= as_of AND (l.valid_to_cycle IS NULL OR l.valid_to_cycle > as_of)))
      LOOP
        cands := cands || jsonb_build_object('to', h.to_pid, 'from', f.pid, 'link', h.link, 'name', h.name,
          'position', h.position, 'pref', h.pref, 'ord', ord, 'path', f.path);
      END LOOP;
      CONTINUE WHEN NOT people;
      FOR person IN
        SELECT DISTINCT l.related_name AS name
        FROM analytics.enterprise_links l
        WHERE l.pid = f.pid AND l.related_kind = 'person' AND l.related_name IS NOT NULL
          AND ((as_of IS NULL AND l.is_current)
            OR (as_of IS NOT NULL AND l.valid_from_cycle <= as_of AND (l.valid_to_cycle IS NULL OR l.valid_to_cycle > as_of)))
      LOOP
        FOR h IN
          SELECT l.pid AS to_pid, l.position
          FROM analytics.enterprise_links l
          WHERE l.related_name = person.name AND l.related_kind = 'person' AND l.pid <> f.pid
            AND ((as_of IS NULL AND l.is_current)
              OR (as_of IS NOT NULL AND l.valid_from_cycle <= as_of AND (l.valid_to_cycle IS NULL OR l.valid_to_cycle > as_of)))
        LOOP
          cands := cands || jsonb_build_object('to', h.to_pid, 'from', f.pid, 'link', 'same_name',
            'name', person.name, 'position', h.position, 'pref', 2, 'ord', ord, 'path', f.path);
        END LOOP;
      END LOOP;
    END LOOP;
    SELECT coalesce(jsonb_agg(jsonb_build_object('pid', c.pid, 'link', c.link, 'path', c.path) ORDER BY c.pid), '[]'::jsonb)
    INTO found
    FROM (
      SELECT DISTINCT ON (e->>'to') e->>'to' AS pid, e->>'link' AS link,
        (e->'path') || jsonb_build_array(jsonb_build_object('from', e->'from', 'to', e->'to', 'link', e->'link',
          'name', e->'name', 'position', e->'position')) AS path
      FROM jsonb_array_elements(cands) e
      WHERE (e->>'to') <> ALL (visited)
      ORDER BY e->>'to', (e->>'pref')::int, (e->>'ord')::int, e->>'name', e->>'position'
    ) c;
    frontier := found;
    visited := visited || ARRAY(SELECT e->>'pid' FROM jsonb_array_elements(found) e);
    RETURN QUERY
      SELECT e->>'pid',
        coalesce(n.ent_name, CASE WHEN e->>'link' = 'shareholder' THEN e->'path'->-1->>'name' END),
        level, e->>'link', e->'path'
      FROM jsonb_array_elements(found) e
      LEFT JOIN LATERAL (
        SELECT eh.ent_name FROM analytics.enterprise_history eh
        WHERE eh.pid = e->>'pid' AND (as_of IS NULL OR eh.cycle <= as_of)
        ORDER BY eh.version DESC LIMIT 1
      ) n ON true;
  END LOOP;
END
$$;
