ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_status_check";--> statement-breakpoint
ALTER TABLE "credit_ledger" ALTER COLUMN "credits" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_status_check" CHECK ("credit_ledger"."status" in ('booked', 'presumed', 'unconfirmed'));