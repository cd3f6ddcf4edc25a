CREATE INDEX "enterprise_clearing_members_name_idx" ON "enterprise_clearing_members" USING btree ("name");--> statement-breakpoint
CREATE INDEX "enterprise_shareholders_name_idx" ON "enterprise_shareholders" USING btree ("name");--> statement-breakpoint
CREATE INDEX "enterprise_versions_legal_person_idx" ON "enterprise_versions" USING btree ("legal_person");