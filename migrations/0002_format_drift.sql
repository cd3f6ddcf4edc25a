CREATE TABLE "format_drift" (
	"operation" text NOT NULL,
	"field" text NOT NULL,
	"kind" text NOT NULL,
	"seen" text NOT NULL,
	"expected" text NOT NULL,
	"responses" integer NOT NULL,
	"records" integer NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"first_raw_response_id" bigint,
	"last_raw_response_id" bigint,
	"example" text,
	CONSTRAINT "format_drift_operation_field_kind_seen_pk" PRIMARY KEY("operation","field","kind","seen")
);
--> statement-breakpoint
CREATE TABLE "raw_response_drift" (
	"raw_response_id" bigint NOT NULL,
	"operation" text NOT NULL,
	"field" text NOT NULL,
	"kind" text NOT NULL,
	"seen" text NOT NULL,
	"expected" text NOT NULL,
	"records" integer NOT NULL,
	"example" text,
	"fetched_at" timestamp with time zone NOT NULL,
	CONSTRAINT "raw_response_drift_raw_response_id_field_kind_seen_pk" PRIMARY KEY("raw_response_id","field","kind","seen")
);
--> statement-breakpoint
ALTER TABLE "format_drift" ADD CONSTRAINT "format_drift_first_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("first_raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "format_drift" ADD CONSTRAINT "format_drift_last_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("last_raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "raw_response_drift" ADD CONSTRAINT "raw_response_drift_raw_response_id_raw_responses_id_fk" FOREIGN KEY ("raw_response_id") REFERENCES "public"."raw_responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "raw_response_drift_field_idx" ON "raw_response_drift" USING btree ("operation","field");