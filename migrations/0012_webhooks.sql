CREATE TABLE "delivery_queue" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"subscription_id" bigint NOT NULL,
	"event_seq" bigint NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"holder" text,
	"lease_until" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "delivery_queue_state_check" CHECK ("delivery_queue"."state" in ('pending', 'delivering', 'succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "subscriptions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" timestamp with time zone,
	"types" text[] DEFAULT '{}'::text[] NOT NULL,
	"min_severity" text DEFAULT 'low' NOT NULL,
	"pids" text[] DEFAULT '{}'::text[] NOT NULL,
	"digest_only" boolean DEFAULT false NOT NULL,
	"format" text DEFAULT 'standard' NOT NULL,
	"allow_private" boolean DEFAULT false NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"disabled_reason" text,
	"failing_since" timestamp with time zone,
	"cursor_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "subscriptions_state_check" CHECK ("subscriptions"."state" in ('active', 'paused', 'disabled')),
	CONSTRAINT "subscriptions_format_check" CHECK ("subscriptions"."format" in ('standard', 'slack')),
	CONSTRAINT "subscriptions_severity_check" CHECK ("subscriptions"."min_severity" in ('high', 'medium', 'low'))
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" bigint NOT NULL,
	"subscription_id" bigint NOT NULL,
	"event_seq" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"attempted_at" timestamp with time zone NOT NULL,
	"latency_ms" integer NOT NULL,
	"http_status" integer,
	"outcome" text NOT NULL,
	"error" text,
	"response" text
);
--> statement-breakpoint
ALTER TABLE "delivery_queue" ADD CONSTRAINT "delivery_queue_subscription_id_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_delivery_id_delivery_queue_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."delivery_queue"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_queue_subscription_event_key" ON "delivery_queue" USING btree ("subscription_id","event_seq");--> statement-breakpoint
CREATE INDEX "delivery_queue_due_idx" ON "delivery_queue" USING btree ("subscription_id","next_attempt_at","id") WHERE "delivery_queue"."state" in ('pending', 'delivering');--> statement-breakpoint
CREATE INDEX "webhook_deliveries_subscription_idx" ON "webhook_deliveries" USING btree ("subscription_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_delivery_idx" ON "webhook_deliveries" USING btree ("delivery_id");