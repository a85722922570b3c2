CREATE TABLE "workspace_usage" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"keys" bigint DEFAULT 0 NOT NULL,
	"identities" bigint DEFAULT 0 NOT NULL,
	"permissions" bigint DEFAULT 0 NOT NULL,
	"roles" bigint DEFAULT 0 NOT NULL,
	"namespaces" bigint DEFAULT 0 NOT NULL,
	"bytes" bigint DEFAULT 0 NOT NULL
);
