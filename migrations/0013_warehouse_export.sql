CREATE TABLE "enterprise_sightings" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"pid" text NOT NULL,
	"presence" text NOT NULL,
	"version_id" bigint,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "exports" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"destination" text NOT NULL,
	"load_no" integer NOT NULL,
	"load_id" text NOT NULL,
	"previous_load_id" text,
	"kind" text NOT NULL,
	"format" text NOT NULL,
	"tables" text[] NOT NULL,
	"from_snapshot" text NOT NULL,
	"to_snapshot" text NOT NULL,
	"generation" integer NOT NULL,
	"schema_version" integer NOT NULL,
	"state" text NOT NULL,
	"holder" text,
	"lease_until" timestamp with time zone,
	"rows" bigint,
	"bytes" bigint,
	"manifest" jsonb,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "exports_state_check" CHECK ("exports"."state" in ('writing', 'complete')),
	CONSTRAINT "exports_kind_check" CHECK ("exports"."kind" in ('incremental', 'full'))
);
--> statement-breakpoint
CREATE TABLE "product_sightings" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"product_id" text NOT NULL,
	"version_id" bigint,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rebuild_generation" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"generation" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "enterprise_changes" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "enterprise_observations" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "enterprise_versions" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "enterprise_versions" ADD COLUMN "closed_xid" "xid8";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "product_comments" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "product_versions" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "product_versions" ADD COLUMN "closed_xid" "xid8";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "trending_snapshots" ADD COLUMN "load_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
CREATE INDEX "enterprise_sightings_load_xid_idx" ON "enterprise_sightings" USING btree ("load_xid");--> statement-breakpoint
CREATE UNIQUE INDEX "exports_destination_load_key" ON "exports" USING btree ("destination","load_no");--> statement-breakpoint
CREATE INDEX "product_sightings_load_xid_idx" ON "product_sightings" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "credit_ledger_load_xid_idx" ON "credit_ledger" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "enterprise_changes_load_xid_idx" ON "enterprise_changes" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "enterprise_observations_load_xid_idx" ON "enterprise_observations" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "enterprise_versions_load_xid_idx" ON "enterprise_versions" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "enterprise_versions_closed_xid_idx" ON "enterprise_versions" USING btree ("closed_xid") WHERE "enterprise_versions"."closed_xid" is not null;--> statement-breakpoint
CREATE INDEX "events_load_xid_idx" ON "events" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "product_comments_load_xid_idx" ON "product_comments" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "product_versions_load_xid_idx" ON "product_versions" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "product_versions_closed_xid_idx" ON "product_versions" USING btree ("closed_xid") WHERE "product_versions"."closed_xid" is not null;--> statement-breakpoint
CREATE INDEX "runs_load_xid_idx" ON "runs" USING btree ("load_xid");--> statement-breakpoint
CREATE INDEX "trending_snapshots_load_xid_idx" ON "trending_snapshots" USING btree ("load_xid");--> statement-breakpoint
-- Versions closed before this migration were closed by a transaction the export never saw.
UPDATE "enterprise_versions" SET "closed_xid" = pg_current_xact_id() WHERE "valid_to" IS NOT NULL;--> statement-breakpoint
UPDATE "product_versions" SET "closed_xid" = pg_current_xact_id() WHERE "valid_to" IS NOT NULL;--> statement-breakpoint
INSERT INTO "rebuild_generation" ("singleton", "generation") VALUES (true, 0);--> statement-breakpoint
-- The export cursor of a row that changes after it was written (a run finishing, a presumed credit
-- booked): the transaction of its last change, so the next export carries it again.
CREATE FUNCTION "daybook_touch_load_xid"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.load_xid := pg_current_xact_id();
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "runs_load_xid" BEFORE UPDATE ON "runs" FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "daybook_touch_load_xid"();--> statement-breakpoint
CREATE TRIGGER "credit_ledger_load_xid" BEFORE UPDATE ON "credit_ledger" FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "daybook_touch_load_xid"();--> statement-breakpoint
-- A version is closed once (valid_to set); the transaction that closed it is the cursor of its closing.
CREATE FUNCTION "daybook_version_closed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- A version written already closed (an older answer applied after a newer one).
    NEW.closed_xid := CASE WHEN NEW.valid_to IS NOT NULL THEN pg_current_xact_id() END;
  ELSIF NEW.valid_to IS NOT NULL AND OLD.valid_to IS NULL THEN
    NEW.closed_xid := pg_current_xact_id();
  ELSIF NEW.valid_to IS NULL THEN
    NEW.closed_xid := NULL;
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "enterprise_versions_closed" BEFORE INSERT OR UPDATE ON "enterprise_versions" FOR EACH ROW
  EXECUTE FUNCTION "daybook_version_closed"();--> statement-breakpoint
CREATE TRIGGER "product_versions_closed" BEFORE INSERT OR UPDATE ON "product_versions" FOR EACH ROW
  EXECUTE FUNCTION "daybook_version_closed"();--> statement-breakpoint
-- Every state an enterprise or product row takes, for the export's sightings.
CREATE FUNCTION "daybook_enterprise_sighting"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO enterprise_sightings (pid, presence, version_id, first_seen_at, last_seen_at)
  VALUES (NEW.pid, NEW.presence, NEW.current_version_id, NEW.first_seen_at, NEW.last_seen_at);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "enterprises_sighting_insert" AFTER INSERT ON "enterprises" FOR EACH ROW
  WHEN (NEW.current_version_id IS NOT NULL) EXECUTE FUNCTION "daybook_enterprise_sighting"();--> statement-breakpoint
CREATE TRIGGER "enterprises_sighting_update" AFTER UPDATE ON "enterprises" FOR EACH ROW
  WHEN (NEW.current_version_id IS NOT NULL AND OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "daybook_enterprise_sighting"();--> statement-breakpoint
CREATE FUNCTION "daybook_product_sighting"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO product_sightings (product_id, version_id, first_seen_at, last_seen_at)
  VALUES (NEW.product_id, NEW.current_version_id, NEW.first_seen_at, NEW.last_seen_at);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "products_sighting_insert" AFTER INSERT ON "products" FOR EACH ROW
  WHEN (NEW.current_version_id IS NOT NULL) EXECUTE FUNCTION "daybook_product_sighting"();--> statement-breakpoint
CREATE TRIGGER "products_sighting_update" AFTER UPDATE ON "products" FOR EACH ROW
  WHEN (NEW.current_version_id IS NOT NULL AND OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "daybook_product_sighting"();--> statement-breakpoint
INSERT INTO "enterprise_sightings" ("pid", "presence", "version_id", "first_seen_at", "last_seen_at")
  SELECT "pid", "presence", "current_version_id", "first_seen_at", "last_seen_at" FROM "enterprises"
  WHERE "current_version_id" IS NOT NULL ORDER BY "pid";--> statement-breakpoint
INSERT INTO "product_sightings" ("product_id", "version_id", "first_seen_at", "last_seen_at")
  SELECT "product_id", "current_version_id", "first_seen_at", "last_seen_at" FROM "products"
  WHERE "current_version_id" IS NOT NULL ORDER BY "product_id";
