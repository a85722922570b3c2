-- The analytics tables moved to analytics.db (migrations/analytics/0000_analytics.sql). Their rows
-- were copied there before this runs (src/storage/data-dir.ts); the views and the trigger go first.
DROP VIEW `verification_events`;--> statement-breakpoint
DROP VIEW `verification_rollups_hour_all`;--> statement-breakpoint
DROP VIEW `verification_rollups_day_all`;--> statement-breakpoint
DROP VIEW `verification_rollups_month_all`;--> statement-breakpoint
DROP TRIGGER `verification_rollups_minute_refold`;--> statement-breakpoint
DROP TABLE `verification_event_batches`;--> statement-breakpoint
DROP TABLE `verification_totals_day`;--> statement-breakpoint
DROP TABLE `verification_totals_hour`;--> statement-breakpoint
DROP TABLE `verification_totals_minute`;--> statement-breakpoint
DROP TABLE `verification_totals_month`;--> statement-breakpoint
DROP TABLE `verification_rollups_day`;--> statement-breakpoint
DROP TABLE `verification_rollups_hour`;--> statement-breakpoint
DROP TABLE `verification_rollups_minute`;--> statement-breakpoint
DROP TABLE `verification_rollups_month`;
