DROP INDEX `verification_event_batches_workspace_time_idx`;--> statement-breakpoint
ALTER TABLE `verification_event_batches` ADD `layout` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `verification_event_batches` ADD `key_space_id` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `verification_event_batches_workspace_time_idx` ON `verification_event_batches` (`workspace_id`,`max_time`,`layout`,`key_space_id`);--> statement-breakpoint
-- Raw batch rows of layout 2 (src/services/analytics/raw-events.ts): one key space a row, and each
-- event `[time - min_time, key_id, outcome, spent_credits, latency_ms, tags, identity_id,
-- external_id, request_id]`, the fields from `tags` on left off from the end while they hold their
-- default. The view shows the rows of both layouts one row per event, as before (`position` is an
-- event's place in its row). Each arm searches the index for its own layout's rows.
DROP VIEW `verification_events`;--> statement-breakpoint
CREATE VIEW `verification_events` AS
SELECT
  b.`id` AS `batch_id`, e.`key` AS `position`,
  CAST(e.`value` ->> 0 AS TEXT) AS `request_id`, CAST(e.`value` ->> 1 AS INTEGER) AS `time`, b.`workspace_id` AS `workspace_id`,
  CAST(e.`value` ->> 2 AS TEXT) AS `key_space_id`, CAST(e.`value` ->> 3 AS TEXT) AS `key_id`, CAST(e.`value` ->> 4 AS TEXT) AS `identity_id`,
  CAST(e.`value` ->> 5 AS TEXT) AS `external_id`, CAST(e.`value` ->> 6 AS TEXT) AS `outcome`, CAST(e.`value` ->> 7 AS TEXT) AS `tags`,
  CAST(e.`value` ->> 8 AS INTEGER) AS `spent_credits`, CAST(e.`value` ->> 9 AS REAL) AS `latency_ms`,
  b.`min_time` AS `batch_min_time`, b.`max_time` AS `batch_max_time`
FROM `verification_event_batches` AS b, json_each(b.`events`) AS e
WHERE b.`layout` = 1
UNION ALL
SELECT
  b.`id` AS `batch_id`, e.`key` AS `position`,
  CAST(coalesce(e.`value` ->> 8, '') AS TEXT) AS `request_id`, CAST(b.`min_time` + (e.`value` ->> 0) AS INTEGER) AS `time`, b.`workspace_id` AS `workspace_id`,
  b.`key_space_id` AS `key_space_id`, CAST(e.`value` ->> 1 AS TEXT) AS `key_id`, CAST(coalesce(e.`value` ->> 6, '') AS TEXT) AS `identity_id`,
  CAST(coalesce(e.`value` ->> 7, '') AS TEXT) AS `external_id`, CAST(e.`value` ->> 2 AS TEXT) AS `outcome`, CAST(coalesce(e.`value` ->> 5, '[]') AS TEXT) AS `tags`,
  CAST(e.`value` ->> 3 AS INTEGER) AS `spent_credits`, CAST(e.`value` ->> 4 AS REAL) AS `latency_ms`,
  b.`min_time` AS `batch_min_time`, b.`max_time` AS `batch_max_time`
FROM `verification_event_batches` AS b, json_each(b.`events`) AS e
WHERE b.`layout` = 2;
