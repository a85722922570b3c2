CREATE TABLE "cluster_settings" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"set_at_ms" bigint NOT NULL
);
