ALTER TABLE "subscriptions" DROP CONSTRAINT "subscriptions_format_check";--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "lang" text DEFAULT 'zh' NOT NULL;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "signing_secret" text;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "recent_sends" timestamp with time zone[] DEFAULT '{}'::timestamptz[] NOT NULL;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_lang_check" CHECK ("subscriptions"."lang" in ('zh', 'en'));--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_format_check" CHECK ("subscriptions"."format" in ('standard', 'slack', 'feishu', 'dingtalk', 'wecom', 'teams', 'email'));