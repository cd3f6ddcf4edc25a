CREATE TABLE "raw_bodies" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sha256" "bytea" NOT NULL,
	"body_json" jsonb,
	"body_text" text,
	"body_bytes" "bytea",
	"first_landed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "raw_responses" ADD COLUMN "body_id" bigint;--> statement-breakpoint
-- Each distinct body once, keyed by the sha256 of its bytes as received: the bytes when they were
-- kept, else the text (whose sha256 each call row held); every call row points at its body.
INSERT INTO "raw_bodies" ("sha256", "body_json", "body_text", "body_bytes", "first_landed_at")
SELECT DISTINCT ON ("k") "k", "body_json", "body_text", "body_bytes", "landed_at" FROM (
  SELECT CASE WHEN "body_bytes" IS NOT NULL THEN sha256("body_bytes") ELSE decode("sha256", 'hex') END AS "k",
         "body_json", "body_text", "body_bytes", "landed_at", "id"
  FROM "raw_responses" WHERE "sha256" IS NOT NULL OR "body_bytes" IS NOT NULL
) "x" ORDER BY "k", "id";--> statement-breakpoint
UPDATE "raw_responses" "r" SET "body_id" = "b"."id" FROM "raw_bodies" "b"
WHERE "b"."sha256" = CASE WHEN "r"."body_bytes" IS NOT NULL THEN sha256("r"."body_bytes") ELSE decode("r"."sha256", 'hex') END;--> statement-breakpoint
CREATE UNIQUE INDEX "raw_bodies_sha256_key" ON "raw_bodies" USING btree ("sha256");--> statement-breakpoint
ALTER TABLE "raw_responses" ADD CONSTRAINT "raw_responses_body_id_raw_bodies_id_fk" FOREIGN KEY ("body_id") REFERENCES "public"."raw_bodies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "raw_responses_landed_idx" ON "raw_responses" USING btree ("landed_at");--> statement-breakpoint
CREATE INDEX "raw_responses_body_idx" ON "raw_responses" USING btree ("body_id");