-- The entries added after a plan of the cycle (src/plan/decide.ts newSincePlan, asked every minute
-- by the scheduler): a new entry is above the plan's high-water mark, and an entry watched again
-- keeps its id but is added again (its added_at set anew).
CREATE INDEX "watchlist_added_at_idx" ON "watchlist" USING btree ("added_at");