CREATE TABLE `workspace_usage` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`keys` integer DEFAULT 0 NOT NULL,
	`identities` integer DEFAULT 0 NOT NULL,
	`permissions` integer DEFAULT 0 NOT NULL,
	`roles` integer DEFAULT 0 NOT NULL,
	`namespaces` integer DEFAULT 0 NOT NULL,
	`bytes` integer DEFAULT 0 NOT NULL
);
