CREATE TABLE "cluster_change_notices" (
	"workspace_id" text NOT NULL,
	"version" bigint NOT NULL,
	"tx_id" bigint NOT NULL,
	CONSTRAINT "cluster_change_notices_workspace_id_version_pk" PRIMARY KEY("workspace_id","version")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "cluster_change_notices_version_uq" ON "cluster_change_notices" USING btree ("version");--> statement-breakpoint
CREATE INDEX "cluster_change_notices_tx_idx" ON "cluster_change_notices" USING btree ("tx_id","version");