CREATE TABLE `root_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`start` text NOT NULL,
	`permissions` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `root_keys_hash_uq` ON `root_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `root_keys_workspace_idx` ON `root_keys` (`workspace_id`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`analytics_enabled` integer DEFAULT false NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workspaces_name_uq` ON `workspaces` (lower("name"));--> statement-breakpoint
CREATE TABLE `apis` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`name` text NOT NULL,
	`delete_protection` integer DEFAULT false NOT NULL,
	`ip_whitelist` text,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_space_id`) REFERENCES `key_spaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `apis_workspace_idx` ON `apis` (`workspace_id`);--> statement-breakpoint
CREATE INDEX `apis_key_space_idx` ON `apis` (`key_space_id`);--> statement-breakpoint
CREATE TABLE `key_spaces` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`default_prefix` text,
	`default_bytes` integer,
	`store_encrypted_keys` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `data_keys` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`encrypted` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `identities` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`external_id` text NOT NULL,
	`meta` text,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identities_external_id_live_uq` ON `identities` (`workspace_id`,`external_id`) WHERE "identities"."deleted_at" is null;--> statement-breakpoint
CREATE TABLE `keys` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`hash` text NOT NULL,
	`start` text NOT NULL,
	`name` text,
	`identity_id` text,
	`meta` text,
	`expires_at` integer,
	`enabled` integer DEFAULT true NOT NULL,
	`remaining` integer,
	`refill_amount` integer,
	`refill_day` integer,
	`last_refill_at` integer,
	`recoverable` integer DEFAULT false NOT NULL,
	`encrypted` text,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	`last_used_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_space_id`) REFERENCES `key_spaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`identity_id`) REFERENCES `identities`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `keys_hash_uq` ON `keys` (`hash`);--> statement-breakpoint
CREATE INDEX `keys_key_space_idx` ON `keys` (`key_space_id`,`id`);--> statement-breakpoint
CREATE INDEX `keys_identity_idx` ON `keys` (`identity_id`);--> statement-breakpoint
CREATE TABLE `key_permissions` (
	`key_id` text NOT NULL,
	`permission_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `permission_id`),
	FOREIGN KEY (`key_id`) REFERENCES `keys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`permission_id`) REFERENCES `permissions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `key_permissions_perm_idx` ON `key_permissions` (`permission_id`);--> statement-breakpoint
CREATE TABLE `key_roles` (
	`key_id` text NOT NULL,
	`role_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `role_id`),
	FOREIGN KEY (`key_id`) REFERENCES `keys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `key_roles_role_idx` ON `key_roles` (`role_id`);--> statement-breakpoint
CREATE TABLE `permissions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `permissions_name_uq` ON `permissions` (`workspace_id`,lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX `permissions_slug_uq` ON `permissions` (`workspace_id`,lower("slug"));--> statement-breakpoint
CREATE TABLE `role_permissions` (
	`role_id` text NOT NULL,
	`permission_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`role_id`, `permission_id`),
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`permission_id`) REFERENCES `permissions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `role_permissions_perm_idx` ON `role_permissions` (`permission_id`);--> statement-breakpoint
CREATE TABLE `roles` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `roles_name_uq` ON `roles` (`workspace_id`,lower("name"));--> statement-breakpoint
CREATE TABLE `ratelimit_configs` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`key_id` text,
	`identity_id` text,
	`name` text NOT NULL,
	`limit` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`auto_apply` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_id`) REFERENCES `keys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`identity_id`) REFERENCES `identities`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ratelimit_configs_key_name_uq` ON `ratelimit_configs` (`key_id`,`name`) WHERE "ratelimit_configs"."key_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX `ratelimit_configs_identity_name_uq` ON `ratelimit_configs` (`identity_id`,`name`) WHERE "ratelimit_configs"."identity_id" is not null;--> statement-breakpoint
CREATE TABLE `ratelimit_namespaces` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ratelimit_namespaces_name_uq` ON `ratelimit_namespaces` (`workspace_id`,`name`);--> statement-breakpoint
CREATE TABLE `ratelimit_overrides` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`namespace_id` text NOT NULL,
	`identifier` text NOT NULL,
	`limit` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`namespace_id`) REFERENCES `ratelimit_namespaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ratelimit_overrides_live_uq` ON `ratelimit_overrides` (`namespace_id`,`identifier`) WHERE "ratelimit_overrides"."deleted_at" is null;--> statement-breakpoint
CREATE TABLE `ratelimit_windows` (
	`counter` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`window_start_ms` integer NOT NULL,
	`count` integer NOT NULL,
	`previous_count` integer DEFAULT 0 NOT NULL,
	`expires_ms` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`counter`, `duration_ms`)
);
--> statement-breakpoint
CREATE INDEX `ratelimit_windows_expires_idx` ON `ratelimit_windows` (`expires_ms`);--> statement-breakpoint
CREATE TABLE `audit_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`time` integer NOT NULL,
	`event` text NOT NULL,
	`actor_type` text NOT NULL,
	`actor_id` text NOT NULL,
	`actor_name` text,
	`resources` text NOT NULL,
	`description` text NOT NULL,
	`remote_ip` text,
	`user_agent` text
);
--> statement-breakpoint
CREATE INDEX `audit_logs_workspace_time_idx` ON `audit_logs` (`workspace_id`,`time`);--> statement-breakpoint
CREATE TABLE `verification_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`request_id` text NOT NULL,
	`time` integer NOT NULL,
	`workspace_id` text NOT NULL,
	`key_space_id` text NOT NULL,
	`key_id` text NOT NULL,
	`identity_id` text DEFAULT '' NOT NULL,
	`external_id` text DEFAULT '' NOT NULL,
	`outcome` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`spent_credits` integer DEFAULT 0 NOT NULL,
	`latency_ms` real DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `verification_events_workspace_time_idx` ON `verification_events` (`workspace_id`,`time`);--> statement-breakpoint
CREATE INDEX `verification_events_time_idx` ON `verification_events` (`time`);--> statement-breakpoint
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
);
--> statement-breakpoint
CREATE INDEX `verification_rollups_day_time_idx` ON `verification_rollups_day` (`time`);--> statement-breakpoint
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
);
--> statement-breakpoint
CREATE INDEX `verification_rollups_hour_time_idx` ON `verification_rollups_hour` (`time`);--> statement-breakpoint
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
	PRIMARY KEY(`workspace_id`, `time`, `key_space_id`, `key_id`, `identity_id`, `outcome`, `tags`)
);
--> statement-breakpoint
CREATE INDEX `verification_rollups_minute_time_idx` ON `verification_rollups_minute` (`time`);--> statement-breakpoint
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
);
--> statement-breakpoint
CREATE INDEX `verification_rollups_month_time_idx` ON `verification_rollups_month` (`time`);