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
-- What a shareholder is, from its PID and type: one definition for the view and the function.
CREATE FUNCTION daybook_shareholder_kind(shareholder_pid text, type text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN shareholder_pid IS NOT NULL THEN 'enterprise'
  WHEN type LIKE '%自然人%' OR type = '华侨' THEN 'person'
  WHEN type IS NULL OR type IN ('', '其他投资者') THEN 'unknown'
  ELSE 'organisation'
END;
--> statement-breakpoint
CREATE VIEW analytics.enterprise_links AS
WITH version_links AS (
  SELECT DISTINCT x.*
  FROM (
    SELECT v.pid, 'shareholder'::text AS relation,
      daybook_shareholder_kind(s.shareholder_pid, s.type) AS related_kind,
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
-- next) or, from the company asked about only, a person of the same name in another company
-- (`same_name`; none when `people` is false). A name that more than 20 companies hold that day is
-- too common to link anything, and is passed over. `path` lists the hops from the company asked
-- about, each {"from", "to", "link", "name", "position"}: the shareholder's or the person's name, as
-- the record holding the link gives it. `related_status` is the company's status that day (null
-- when daybook holds no history of it).
--
-- It reads the same links as analytics.enterprise_links, straight from the tables (a property test
-- holds the two equal), as its owner: a reader of the views may call it without any right on the
-- tables, and it returns nothing the views do not show. One indexed query per company reached and
-- per person name; the candidates of a level are gathered in arrays (appended in place), then each
-- company keeps its first path.
CREATE FUNCTION analytics.related_companies(company text, as_of date DEFAULT NULL, depth integer DEFAULT 1, people boolean DEFAULT true)
RETURNS TABLE (related_pid text, related_name text, related_status text, hops integer, link text, path jsonb)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = public, pg_catalog, pg_temp
AS $$
DECLARE
  common_name constant integer := 20;
  visited text[] := ARRAY[company];
  frontier_pids text[] := ARRAY[company];
  frontier_paths jsonb[] := ARRAY['[]'::jsonb];
  prev_pids text[];
  prev_paths jsonb[];
  c_to text[];
  c_from integer[];
  c_link text[];
  c_name text[];
  c_position text[];
  c_pref integer[];
  fv bigint;
  step jsonb;
  nm text;
  st text;
  found record;
  h record;
  person record;
  sharing text[];
  sharing_pos text[];
  level integer;
  k integer;
BEGIN
  IF depth IS NULL OR depth < 1 OR depth > 3 THEN
    RAISE EXCEPTION 'depth must be from 1 to 3, got %', coalesce(depth::text, 'null') USING ERRCODE = '22023';
  END IF;
  FOR level IN 1..depth LOOP
    EXIT WHEN cardinality(frontier_pids) = 0;
    c_to := '{}'; c_from := '{}'; c_link := '{}'; c_name := '{}'; c_position := '{}'; c_pref := '{}';
    FOR k IN 1..cardinality(frontier_pids) LOOP
      -- The version of that day of the company at hand.
      SELECT v.id INTO fv FROM enterprise_versions v
      WHERE v.pid = frontier_pids[k] AND (as_of IS NULL OR v.cycle <= as_of)
      ORDER BY v.version DESC LIMIT 1;
      FOR h IN
        SELECT s.shareholder_pid AS to_pid, 'shareholder' AS link, s.name, s.type AS position
        FROM enterprise_shareholders s
        WHERE s.version_id = fv AND s.shareholder_pid IS NOT NULL
        UNION ALL
        SELECT v.pid, 'holds', s.name, s.type
        FROM enterprise_shareholders s JOIN enterprise_versions v ON v.id = s.version_id
        WHERE s.shareholder_pid = frontier_pids[k]
          AND ((as_of IS NULL AND v.is_current) OR (as_of IS NOT NULL AND v.id = (
            SELECT w.id FROM enterprise_versions w WHERE w.pid = v.pid AND w.cycle <= as_of
            ORDER BY w.version DESC LIMIT 1)))
      LOOP
        CONTINUE WHEN h.to_pid = ANY (visited);
        c_to := c_to || h.to_pid; c_from := c_from || k; c_link := c_link || h.link::text;
        c_name := c_name || h.name; c_position := c_position || h.position; c_pref := c_pref || 1;
      END LOOP;
      CONTINUE WHEN NOT people OR level > 1 OR fv IS NULL;
      FOR person IN
        SELECT DISTINCT x.name FROM (
          SELECT v.legal_person AS name FROM enterprise_versions v WHERE v.id = fv AND v.legal_person <> ''
          UNION ALL SELECT p.name FROM enterprise_persons p WHERE p.version_id = fv
          UNION ALL SELECT c.name FROM enterprise_clearing_members c WHERE c.version_id = fv
          UNION ALL SELECT s.name FROM enterprise_shareholders s
            WHERE s.version_id = fv AND daybook_shareholder_kind(s.shareholder_pid, s.type) = 'person'
        ) x
        WHERE x.name IS NOT NULL
        ORDER BY x.name
      LOOP
        SELECT array_agg(y.pid ORDER BY y.pid), array_agg(y.position ORDER BY y.pid) INTO sharing, sharing_pos
        FROM (
          SELECT DISTINCT ON (x.pid) x.pid, x.position
          FROM (
            SELECT v.pid, v.legal_person_desc AS position, v.id, v.version, v.is_current, v.cycle
            FROM enterprise_versions v WHERE v.legal_person = person.name
            UNION ALL
            SELECT v.pid, p.position, v.id, v.version, v.is_current, v.cycle
            FROM enterprise_persons p JOIN enterprise_versions v ON v.id = p.version_id WHERE p.name = person.name
            UNION ALL
            SELECT v.pid, c.position, v.id, v.version, v.is_current, v.cycle
            FROM enterprise_clearing_members c JOIN enterprise_versions v ON v.id = c.version_id WHERE c.name = person.name
            UNION ALL
            SELECT v.pid, s.type, v.id, v.version, v.is_current, v.cycle
            FROM enterprise_shareholders s JOIN enterprise_versions v ON v.id = s.version_id
            WHERE s.name = person.name AND daybook_shareholder_kind(s.shareholder_pid, s.type) = 'person'
          ) x
          WHERE x.pid <> frontier_pids[k]
            AND ((as_of IS NULL AND x.is_current) OR (as_of IS NOT NULL AND x.cycle <= as_of AND x.id = (
              SELECT w.id FROM enterprise_versions w WHERE w.pid = x.pid AND w.cycle <= as_of
              ORDER BY w.version DESC LIMIT 1)))
          ORDER BY x.pid, x.position
          LIMIT common_name + 1
        ) y;
        CONTINUE WHEN sharing IS NULL OR cardinality(sharing) > common_name;
        FOR i IN 1..cardinality(sharing) LOOP
          CONTINUE WHEN sharing[i] = ANY (visited);
          c_to := c_to || sharing[i]; c_from := c_from || k; c_link := c_link || 'same_name'::text;
          c_name := c_name || person.name; c_position := c_position || sharing_pos[i]; c_pref := c_pref || 2;
        END LOOP;
      END LOOP;
    END LOOP;
    prev_pids := frontier_pids;
    prev_paths := frontier_paths;
    frontier_pids := '{}';
    frontier_paths := '{}';
    FOR found IN
      SELECT DISTINCT ON (c.to_pid) c.to_pid, c.from_k, c.link, c.name, c.position
      FROM unnest(c_to, c_from, c_link, c_name, c_position, c_pref) AS c(to_pid, from_k, link, name, position, pref)
      ORDER BY c.to_pid, c.pref, c.from_k, c.name, c.position
    LOOP
      step := prev_paths[found.from_k] || jsonb_build_array(jsonb_build_object('from', prev_pids[found.from_k],
        'to', found.to_pid, 'link', found.link, 'name', found.name, 'position', found.position));
      frontier_pids := frontier_pids || found.to_pid;
      frontier_paths := frontier_paths || step;
      visited := visited || found.to_pid;
      nm := NULL;
      st := NULL;
      SELECT v.ent_name, v.ent_status INTO nm, st
      FROM enterprise_versions v
      WHERE v.pid = found.to_pid AND (as_of IS NULL OR v.cycle <= as_of)
      ORDER BY v.version DESC LIMIT 1;
      related_pid := found.to_pid;
      related_name := coalesce(nm, CASE WHEN found.link = 'shareholder' THEN found.name END);
      related_status := st;
      hops := level;
      link := found.link;
      path := step;
      RETURN NEXT;
    END LOOP;
  END LOOP;
END
$$;
