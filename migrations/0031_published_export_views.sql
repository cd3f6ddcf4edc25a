-- The tables the warehouse export copies (src/export/contract.ts), published by their owners as
-- views of every column. The export names only these views, never the tables (docs/architecture.md,
-- "Reads outside the owner"). A view holds its table's columns as they were when it was made, and
-- Postgres refuses to drop a column a view shows: a change to an exported column must recreate the
-- view here, in a migration, and so cannot pass the export by unseen. Postgres inlines a simple
-- view into the query, which still uses the tables' indexes (load_xid): a package costs what it did.
-- Owner src/history/enterprise-store.ts. The enterprise history: versions, their lists, changes,
-- observations and sightings.
CREATE VIEW published.enterprise_versions AS SELECT * FROM enterprise_versions;
--> statement-breakpoint
CREATE VIEW published.enterprise_persons AS SELECT * FROM enterprise_persons;
--> statement-breakpoint
CREATE VIEW published.enterprise_shareholders AS SELECT * FROM enterprise_shareholders;
--> statement-breakpoint
CREATE VIEW published.enterprise_clearing_members AS SELECT * FROM enterprise_clearing_members;
--> statement-breakpoint
CREATE VIEW published.enterprise_changes AS SELECT * FROM enterprise_changes;
--> statement-breakpoint
CREATE VIEW published.enterprise_observations AS SELECT * FROM enterprise_observations;
--> statement-breakpoint
CREATE VIEW published.enterprise_sightings AS SELECT * FROM enterprise_sightings;
--> statement-breakpoint
-- Owner src/history/product-store.ts. The product history and the trending lists.
CREATE VIEW published.product_versions AS SELECT * FROM product_versions;
--> statement-breakpoint
CREATE VIEW published.product_topics AS SELECT * FROM product_topics;
--> statement-breakpoint
CREATE VIEW published.product_media AS SELECT * FROM product_media;
--> statement-breakpoint
CREATE VIEW published.product_links AS SELECT * FROM product_links;
--> statement-breakpoint
CREATE VIEW published.product_comments AS SELECT * FROM product_comments;
--> statement-breakpoint
CREATE VIEW published.product_sightings AS SELECT * FROM product_sightings;
--> statement-breakpoint
CREATE VIEW published.trending_snapshots AS SELECT * FROM trending_snapshots;
--> statement-breakpoint
-- Owner src/events/outbox.ts. The events.
CREATE VIEW published.events AS SELECT * FROM events;
--> statement-breakpoint
-- Owner src/landing/runs.ts. The runs.
CREATE VIEW published.runs AS SELECT * FROM runs;
