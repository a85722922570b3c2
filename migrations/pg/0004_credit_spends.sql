CREATE TABLE "credit_spends" (
	"id" text PRIMARY KEY NOT NULL,
	"charges" text NOT NULL,
	"state" text DEFAULT 'charged' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "credit_spends_created_at_idx" ON "credit_spends" USING btree ("created_at");