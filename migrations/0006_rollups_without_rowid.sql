-- The rollup and totals tables become WITHOUT ROWID: one B-tree each, clustered on the primary key
-- every upsert and query already goes by, instead of a rowid table, its primary-key index and an
-- index on time (dropped with the old table; retention now prunes along the primary key). Each
-- table is copied whole into its new layout and the old one dropped, in the migration's one
-- transaction, so the rows are all there or the old tables are untouched. The copy needs free disk
-- (and WAL) about the size of these tables while it runs.
CREATE TABLE `__new_verification_rollups_minute` (
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
INSERT INTO `__new_verification_rollups_minute` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`)
SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_minute` ORDER BY `workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`;
--> statement-breakpoint
DROP TABLE `verification_rollups_minute`;
--> statement-breakpoint
ALTER TABLE `__new_verification_rollups_minute` RENAME TO `verification_rollups_minute`;
--> statement-breakpoint
CREATE TABLE `__new_verification_rollups_hour` (
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
INSERT INTO `__new_verification_rollups_hour` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`)
SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_hour` ORDER BY `workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`;
--> statement-breakpoint
DROP TABLE `verification_rollups_hour`;
--> statement-breakpoint
ALTER TABLE `__new_verification_rollups_hour` RENAME TO `verification_rollups_hour`;
--> statement-breakpoint
CREATE TABLE `__new_verification_rollups_day` (
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
INSERT INTO `__new_verification_rollups_day` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`)
SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_day` ORDER BY `workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`;
--> statement-breakpoint
DROP TABLE `verification_rollups_day`;
--> statement-breakpoint
ALTER TABLE `__new_verification_rollups_day` RENAME TO `verification_rollups_day`;
--> statement-breakpoint
CREATE TABLE `__new_verification_rollups_month` (
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
INSERT INTO `__new_verification_rollups_month` (`time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms`)
SELECT `time`, `workspace_id`, `key_space_id`, `key_id`, `identity_id`, `external_id`, `outcome`, `tags`, `count`, `spent_credits`, `latency_sum_ms`, `latency_max_ms` FROM `verification_rollups_month` ORDER BY `workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`;
--> statement-breakpoint
DROP TABLE `verification_rollups_month`;
--> statement-breakpoint
ALTER TABLE `__new_verification_rollups_month` RENAME TO `verification_rollups_month`;
--> statement-breakpoint
CREATE TABLE `__new_verification_totals_minute` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_verification_totals_minute` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits` FROM `verification_totals_minute` ORDER BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
DROP TABLE `verification_totals_minute`;
--> statement-breakpoint
ALTER TABLE `__new_verification_totals_minute` RENAME TO `verification_totals_minute`;
--> statement-breakpoint
CREATE TABLE `__new_verification_totals_hour` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_verification_totals_hour` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits` FROM `verification_totals_hour` ORDER BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
DROP TABLE `verification_totals_hour`;
--> statement-breakpoint
ALTER TABLE `__new_verification_totals_hour` RENAME TO `verification_totals_hour`;
--> statement-breakpoint
CREATE TABLE `__new_verification_totals_day` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_verification_totals_day` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits` FROM `verification_totals_day` ORDER BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
DROP TABLE `verification_totals_day`;
--> statement-breakpoint
ALTER TABLE `__new_verification_totals_day` RENAME TO `verification_totals_day`;
--> statement-breakpoint
CREATE TABLE `__new_verification_totals_month` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_verification_totals_month` (`time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits`)
SELECT `time`, `workspace_id`, `key_space_id`, `outcome`, `count`, `spent_credits` FROM `verification_totals_month` ORDER BY `workspace_id`, `time`, `key_space_id`, `outcome`;
--> statement-breakpoint
DROP TABLE `verification_totals_month`;
--> statement-breakpoint
ALTER TABLE `__new_verification_totals_month` RENAME TO `verification_totals_month`;
