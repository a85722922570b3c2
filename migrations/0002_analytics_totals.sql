CREATE TABLE `verification_totals_day` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
);
--> statement-breakpoint
CREATE INDEX `verification_totals_day_time_idx` ON `verification_totals_day` (`time`);--> statement-breakpoint
CREATE TABLE `verification_totals_hour` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
);
--> statement-breakpoint
CREATE INDEX `verification_totals_hour_time_idx` ON `verification_totals_hour` (`time`);--> statement-breakpoint
CREATE TABLE `verification_totals_minute` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
);
--> statement-breakpoint
CREATE INDEX `verification_totals_minute_time_idx` ON `verification_totals_minute` (`time`);--> statement-breakpoint
CREATE TABLE `verification_totals_month` (
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`outcome` text NOT NULL,
	`count` integer NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `outcome`)
);
--> statement-breakpoint
CREATE INDEX `verification_totals_month_time_idx` ON `verification_totals_month` (`time`);