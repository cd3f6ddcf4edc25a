DROP INDEX "raw_responses_op_fetched_idx";--> statement-breakpoint
CREATE INDEX "raw_responses_list_date_idx" ON "raw_responses" USING btree (("params"->>'date')) WHERE "raw_responses"."operation" = 'product-listing';--> statement-breakpoint
ALTER TABLE "raw_responses" DROP COLUMN "body_json";--> statement-breakpoint
ALTER TABLE "raw_responses" DROP COLUMN "body_text";--> statement-breakpoint
ALTER TABLE "raw_responses" DROP COLUMN "body_bytes";--> statement-breakpoint
ALTER TABLE "raw_responses" DROP COLUMN "sha256";--> statement-breakpoint
-- The landing as one row per call with its body, for reading (daybook's own code, and anyone with
-- SQL on the database); never written to.
CREATE VIEW "raw_answers" AS
SELECT "r"."id", "r"."run_id", "r"."operation", "r"."params", "r"."http_status", "b"."body_json", "b"."body_text",
       "b"."body_bytes", encode("b"."sha256", 'hex') AS "sha256", "r"."outcome", "r"."cycle", "r"."fetched_at",
       "r"."landed_at", "r"."duration_ms", "r"."body_id"
FROM "raw_responses" "r" LEFT JOIN "raw_bodies" "b" ON "b"."id" = "r"."body_id";