-- WITHOUT ROWID added by hand (drizzle cannot declare it), as for the rollups in 0000.
CREATE TABLE `ratelimit_decisions_day` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`namespace_id` text NOT NULL,
	`passed` integer NOT NULL,
	`blocked` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `namespace_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `ratelimit_decisions_hour` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`namespace_id` text NOT NULL,
	`passed` integer NOT NULL,
	`blocked` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `namespace_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `ratelimit_decisions_minute` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`namespace_id` text NOT NULL,
	`passed` integer NOT NULL,
	`blocked` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `namespace_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `ratelimit_decisions_month` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`namespace_id` text NOT NULL,
	`passed` integer NOT NULL,
	`blocked` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `namespace_id`)
) WITHOUT ROWID;
