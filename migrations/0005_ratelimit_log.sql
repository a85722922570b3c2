CREATE TABLE `ratelimit_log` (
	`seq` integer PRIMARY KEY NOT NULL,
	`windows` integer NOT NULL,
	`expires_ms` integer NOT NULL,
	`data` text NOT NULL
);
