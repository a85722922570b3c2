CREATE SEQUENCE "public"."cluster_change_version" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "cluster_changes" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_runs" (
	"job" text NOT NULL,
	"tick_ms" bigint NOT NULL,
	"owner" text NOT NULL,
	"lease_until_ms" bigint NOT NULL,
	"finished_at_ms" bigint,
	CONSTRAINT "job_runs_job_tick_ms_pk" PRIMARY KEY("job","tick_ms")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "cluster_changes_version_uq" ON "cluster_changes" USING btree ("version");