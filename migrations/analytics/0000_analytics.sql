-- The analytics tables in analytics.db, a file of their own (src/storage/data-dir.ts), as they
-- stood in tollgate.db after its migration 0008: the rollups and totals WITHOUT ROWID (drizzle
-- cannot declare it), the raw events in batch rows read through a view, the minute rollup's
-- refold trigger and the coarser rollups' views. tollgate.db's migration 0009 drops them there
-- once their rows are copied here.
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
CREATE TABLE `verification_totals_day` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `verification_totals_hour` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `verification_totals_minute` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `verification_totals_month` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `verification_rollups_day` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`key_id` text NOT NULL,
	`identity_id` text DEFAULT '' NOT NULL,
	`external_id` text DEFAULT '' NOT NULL,
	`outcome` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	`latency_sum_ms` real DEFAULT 0 NOT NULL,
	`latency_max_ms` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `verification_rollups_hour` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`key_id` text NOT NULL,
	`identity_id` text DEFAULT '' NOT NULL,
	`external_id` text DEFAULT '' NOT NULL,
	`outcome` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	`latency_sum_ms` real DEFAULT 0 NOT NULL,
	`latency_max_ms` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `verification_rollups_minute` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`key_id` text NOT NULL,
	`identity_id` text DEFAULT '' NOT NULL,
	`external_id` text DEFAULT '' NOT NULL,
	`outcome` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	`latency_sum_ms` real DEFAULT 0 NOT NULL,
	`latency_max_ms` real DEFAULT 0 NOT NULL,
	`folded` integer DEFAULT 1 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `verification_rollups_minute_unfolded_idx` ON `verification_rollups_minute` (`workspace_id`,`time`) WHERE "verification_rollups_minute"."folded" = 0;--> statement-breakpoint
CREATE TABLE `verification_rollups_month` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`key_id` text NOT NULL,
	`identity_id` text DEFAULT '' NOT NULL,
	`external_id` text DEFAULT '' NOT NULL,
	`outcome` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	`latency_sum_ms` real DEFAULT 0 NOT NULL,
	`latency_max_ms` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`)
) WITHOUT ROWID;--> statement-breakpoint
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
FROM `verification_event_batches` AS b, json_each(b.`events`) AS e;--> statement-breakpoint
-- A folded minute row that is updated later (an event that arrives after its minute was folded)
-- passes the difference on to its hour, day and month rows, so they always hold every folded count.
CREATE TRIGGER `verification_rollups_minute_refold` AFTER UPDATE OF `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`
ON `verification_rollups_minute` WHEN old.`folded` = 1 AND new.`folded` = 1
BEGIN
  INSERT INTO `verification_rollups_hour` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`) VALUES (CAST(new.`time` / 3600000 * 3600000 AS INTEGER), new.`workspace_id`, new.`key_space_id`, new.`key_id`, new.`identity_id`, new.`external_id`, new.`outcome`, new.`tags`, new.`count` - old.`count`, new.`spent_credits` - old.`spent_credits`, new.`latency_sum_ms` - old.`latency_sum_ms`, new.`latency_max_ms`)
    ON CONFLICT (`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`) DO UPDATE SET `count` = `count` + excluded.`count`, `spent_credits` = `spent_credits` + excluded.`spent_credits`,
      `latency_sum_ms` = `latency_sum_ms` + excluded.`latency_sum_ms`, `latency_max_ms` = max(`latency_max_ms`, excluded.`latency_max_ms`);
  INSERT INTO `verification_rollups_day` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`) VALUES (CAST(new.`time` / 86400000 * 86400000 AS INTEGER), new.`workspace_id`, new.`key_space_id`, new.`key_id`, new.`identity_id`, new.`external_id`, new.`outcome`, new.`tags`, new.`count` - old.`count`, new.`spent_credits` - old.`spent_credits`, new.`latency_sum_ms` - old.`latency_sum_ms`, new.`latency_max_ms`)
    ON CONFLICT (`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`) DO UPDATE SET `count` = `count` + excluded.`count`, `spent_credits` = `spent_credits` + excluded.`spent_credits`,
      `latency_sum_ms` = `latency_sum_ms` + excluded.`latency_sum_ms`, `latency_max_ms` = max(`latency_max_ms`, excluded.`latency_max_ms`);
  INSERT INTO `verification_rollups_month` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`) VALUES (CAST(unixepoch(new.`time` / 1000, 'unixepoch', 'start of month') * 1000 AS INTEGER), new.`workspace_id`, new.`key_space_id`, new.`key_id`, new.`identity_id`, new.`external_id`, new.`outcome`, new.`tags`, new.`count` - old.`count`, new.`spent_credits` - old.`spent_credits`, new.`latency_sum_ms` - old.`latency_sum_ms`, new.`latency_max_ms`)
    ON CONFLICT (`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`) DO UPDATE SET `count` = `count` + excluded.`count`, `spent_credits` = `spent_credits` + excluded.`spent_credits`,
      `latency_sum_ms` = `latency_sum_ms` + excluded.`latency_sum_ms`, `latency_max_ms` = max(`latency_max_ms`, excluded.`latency_max_ms`);
END;--> statement-breakpoint
-- Each coarser rollup as the queries read it: its rows, and the minute rows not folded into it yet,
-- in its buckets. A (bucket, key, identity, outcome, tags) may have a row of each; sums are exact.
CREATE VIEW `verification_rollups_hour_all` AS
  SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_hour`
  UNION ALL
  SELECT CAST(`time` / 3600000 * 3600000 AS INTEGER), `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` INDEXED BY `verification_rollups_minute_unfolded_idx` WHERE `folded` = 0;--> statement-breakpoint
CREATE VIEW `verification_rollups_day_all` AS
  SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_day`
  UNION ALL
  SELECT CAST(`time` / 86400000 * 86400000 AS INTEGER), `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` INDEXED BY `verification_rollups_minute_unfolded_idx` WHERE `folded` = 0;--> statement-breakpoint
CREATE VIEW `verification_rollups_month_all` AS
  SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_month`
  UNION ALL
  SELECT CAST(unixepoch(`time` / 1000, 'unixepoch', 'start of month') * 1000 AS INTEGER), `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` INDEXED BY `verification_rollups_minute_unfolded_idx` WHERE `folded` = 0;
