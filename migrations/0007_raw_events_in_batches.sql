CREATE TABLE `verification_event_batches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` text NOT NULL,
	`min_time` integer NOT NULL,
	`max_time` integer NOT NULL,
	`event_count` integer NOT NULL,
	`events` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `verification_event_batches_workspace_time_idx` ON `verification_event_batches` (`workspace_id`,`max_time`);--> statement-breakpoint
-- The events already written, 1,000 to a row per workspace, in the order they were written.
INSERT INTO `verification_event_batches` (`workspace_id`, `min_time`, `max_time`, `event_count`, `events`)
SELECT `workspace_id`, min(`time`), max(`time`), count(*),
  json_group_array(json_array(`request_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `spent_credits`, `latency_ms`) ORDER BY `id`)
FROM (SELECT *, (row_number() OVER (PARTITION BY `workspace_id` ORDER BY `id`) - 1) / 1000 AS `chunk` FROM `verification_events`)
GROUP BY `workspace_id`, `chunk`
ORDER BY `workspace_id`, `chunk`;--> statement-breakpoint
DROP TABLE `verification_events`;--> statement-breakpoint
-- One row per event, as the table it replaces had (with `batch_id` and `position` for `id`), plus
-- the bounds of its batch so that a query can confine a time range to the batches that hold it.
-- Each CAST gives its column the affinity the table's column had, so comparisons work as before.
CREATE VIEW `verification_events` AS SELECT
  b.`id` AS `batch_id`, e.`key` AS `position`,
  CAST(e.`value` ->> 0 AS TEXT) AS `request_id`, CAST(e.`value` ->> 1 AS INTEGER) AS `time`, b.`workspace_id` AS `workspace_id`,
  CAST(e.`value` ->> 2 AS TEXT) AS `key_space_id`, CAST(e.`value` ->> 3 AS TEXT) AS `key_id`, CAST(e.`value` ->> 4 AS TEXT) AS `identity_id`,
  CAST(e.`value` ->> 5 AS TEXT) AS `external_id`, CAST(e.`value` ->> 6 AS TEXT) AS `outcome`, CAST(e.`value` ->> 7 AS TEXT) AS `tags`,
  CAST(e.`value` ->> 8 AS INTEGER) AS `spent_credits`, CAST(e.`value` ->> 9 AS REAL) AS `latency_ms`,
  b.`min_time` AS `batch_min_time`, b.`max_time` AS `batch_max_time`
FROM `verification_event_batches` AS b, json_each(b.`events`) AS e;
