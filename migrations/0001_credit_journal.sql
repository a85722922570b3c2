CREATE TABLE `credit_journal` (
	`id` integer PRIMARY KEY NOT NULL,
	`entries` text NOT NULL
);
