CREATE SCHEMA "analytics";
--> statement-breakpoint
CREATE TABLE "analytics"."ratelimit_decisions_day" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"namespace_id" text COLLATE "C" NOT NULL,
	"passed" bigint NOT NULL,
	"blocked" bigint NOT NULL,
	CONSTRAINT "ratelimit_decisions_day_pk" PRIMARY KEY("workspace_id","time","namespace_id")
);
--> statement-breakpoint
CREATE TABLE "analytics"."ratelimit_decisions_hour" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"namespace_id" text COLLATE "C" NOT NULL,
	"passed" bigint NOT NULL,
	"blocked" bigint NOT NULL,
	CONSTRAINT "ratelimit_decisions_hour_pk" PRIMARY KEY("workspace_id","time","namespace_id")
);
--> statement-breakpoint
CREATE TABLE "analytics"."ratelimit_decisions_minute" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"namespace_id" text COLLATE "C" NOT NULL,
	"passed" bigint NOT NULL,
	"blocked" bigint NOT NULL,
	CONSTRAINT "ratelimit_decisions_minute_pk" PRIMARY KEY("workspace_id","time","namespace_id")
);
--> statement-breakpoint
CREATE TABLE "analytics"."ratelimit_decisions_month" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"namespace_id" text COLLATE "C" NOT NULL,
	"passed" bigint NOT NULL,
	"blocked" bigint NOT NULL,
	CONSTRAINT "ratelimit_decisions_month_pk" PRIMARY KEY("workspace_id","time","namespace_id")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "analytics"."verification_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"request_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"key_id" text COLLATE "C" NOT NULL,
	"identity_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"external_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"tags" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	"latency_ms" double precision DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_totals_day" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_totals_day_pk" PRIMARY KEY("workspace_id","time","key_space_id","outcome")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_totals_hour" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_totals_hour_pk" PRIMARY KEY("workspace_id","time","key_space_id","outcome")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_totals_minute" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_totals_minute_pk" PRIMARY KEY("workspace_id","time","key_space_id","outcome")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_totals_month" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_totals_month_pk" PRIMARY KEY("workspace_id","time","key_space_id","outcome")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_rollups_day" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"key_id" text COLLATE "C" NOT NULL,
	"identity_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"external_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"tags" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	"latency_sum_ms" double precision DEFAULT 0 NOT NULL,
	"latency_max_ms" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_rollups_day_pk" PRIMARY KEY("workspace_id","time","key_space_id","key_id","identity_id","outcome","tags")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_rollups_hour" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"key_id" text COLLATE "C" NOT NULL,
	"identity_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"external_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"tags" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	"latency_sum_ms" double precision DEFAULT 0 NOT NULL,
	"latency_max_ms" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_rollups_hour_pk" PRIMARY KEY("workspace_id","time","key_space_id","key_id","identity_id","outcome","tags")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_rollups_minute" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"key_id" text COLLATE "C" NOT NULL,
	"identity_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"external_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"tags" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	"latency_sum_ms" double precision DEFAULT 0 NOT NULL,
	"latency_max_ms" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_rollups_minute_pk" PRIMARY KEY("workspace_id","time","key_space_id","key_id","identity_id","outcome","tags")
);
--> statement-breakpoint
CREATE TABLE "analytics"."verification_rollups_month" (
	"time" bigint NOT NULL,
	"workspace_id" text COLLATE "C" NOT NULL,
	"key_space_id" text COLLATE "C" NOT NULL,
	"key_id" text COLLATE "C" NOT NULL,
	"identity_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"external_id" text COLLATE "C" DEFAULT '' NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"tags" text COLLATE "C" DEFAULT '[]' NOT NULL,
	"count" bigint NOT NULL,
	"spent_credits" bigint DEFAULT 0 NOT NULL,
	"latency_sum_ms" double precision DEFAULT 0 NOT NULL,
	"latency_max_ms" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "verification_rollups_month_pk" PRIMARY KEY("workspace_id","time","key_space_id","key_id","identity_id","outcome","tags")
);
--> statement-breakpoint
CREATE INDEX "ratelimit_decisions_day_time_idx" ON "analytics"."ratelimit_decisions_day" USING btree ("time");--> statement-breakpoint
CREATE INDEX "ratelimit_decisions_hour_time_idx" ON "analytics"."ratelimit_decisions_hour" USING btree ("time");--> statement-breakpoint
CREATE INDEX "ratelimit_decisions_minute_time_idx" ON "analytics"."ratelimit_decisions_minute" USING btree ("time");--> statement-breakpoint
CREATE INDEX "ratelimit_decisions_month_time_idx" ON "analytics"."ratelimit_decisions_month" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_events_workspace_time_idx" ON "analytics"."verification_events" USING btree ("workspace_id","time");--> statement-breakpoint
CREATE INDEX "verification_events_time_idx" ON "analytics"."verification_events" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_totals_day_time_idx" ON "analytics"."verification_totals_day" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_totals_hour_time_idx" ON "analytics"."verification_totals_hour" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_totals_minute_time_idx" ON "analytics"."verification_totals_minute" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_totals_month_time_idx" ON "analytics"."verification_totals_month" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_rollups_day_time_idx" ON "analytics"."verification_rollups_day" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_rollups_hour_time_idx" ON "analytics"."verification_rollups_hour" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_rollups_minute_time_idx" ON "analytics"."verification_rollups_minute" USING btree ("time");--> statement-breakpoint
CREATE INDEX "verification_rollups_month_time_idx" ON "analytics"."verification_rollups_month" USING btree ("time");--> statement-breakpoint
-- Every text column above is COLLATE "C" (drizzle cannot declare it): callers' queries compare and
-- sort text by bytes, as SQLite does in the embedded mode, whatever the database's locale.
-- The role callers' analytics queries run as (SET LOCAL ROLE): it reads this schema and nothing
-- else. Roles belong to the server, not the database: another database may have created it.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'tollgate_analytics_reader') THEN
    CREATE ROLE tollgate_analytics_reader NOLOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;--> statement-breakpoint
GRANT USAGE ON SCHEMA "analytics" TO tollgate_analytics_reader;--> statement-breakpoint
GRANT SELECT ON ALL TABLES IN SCHEMA "analytics" TO tollgate_analytics_reader;--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA "analytics" GRANT SELECT ON TABLES TO tollgate_analytics_reader;--> statement-breakpoint
GRANT tollgate_analytics_reader TO CURRENT_USER;
