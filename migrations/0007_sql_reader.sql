-- `daybook sql` runs a person's text as a login role of its own (src/cli/sql.ts says why): not a
-- superuser, member of no role, read-only by default, a statement timeout, SELECT on the
-- analytics views and nothing else. Roles belong to the whole server, so it is named after this
-- database; its name and password are kept here, readable by the owner (and superusers) only.
CREATE TABLE "sql_reader" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"role" text NOT NULL,
	"password" text NOT NULL,
	CONSTRAINT "sql_reader_one_row" CHECK ("sql_reader"."id")
);
--> statement-breakpoint
REVOKE ALL ON TABLE "sql_reader" FROM PUBLIC;
--> statement-breakpoint
-- Makes the role and its grants when missing, and returns its name; returns null, changing
-- nothing, when the role is missing and the user running it may not create roles. Run here, and
-- by `daybook sql` each time (a database cloned or restored elsewhere, a view added since).
CREATE FUNCTION "daybook_sql_reader_ensure"() RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  stored record;
  reader text;
  secret text;
  obj oid;
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
  IF NOT has_schema_privilege(reader, 'analytics', 'USAGE') THEN
    EXECUTE format('GRANT USAGE ON SCHEMA analytics TO %I', reader);
  END IF;
  FOR obj IN
    SELECT c.oid FROM pg_class c
    WHERE c.relnamespace = 'analytics'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
      AND NOT has_table_privilege(reader, c.oid, 'SELECT')
  LOOP
    EXECUTE format('GRANT SELECT ON %s TO %I', obj::regclass, reader);
  END LOOP;
  RETURN reader;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "daybook_sql_reader_ensure"() FROM PUBLIC;
--> statement-breakpoint
SELECT "daybook_sql_reader_ensure"();
