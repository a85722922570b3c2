DROP INDEX "workspaces_name_uq";--> statement-breakpoint
DROP INDEX "permissions_name_uq";--> statement-breakpoint
DROP INDEX "permissions_slug_uq";--> statement-breakpoint
DROP INDEX "roles_name_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "workspaces_name_uq" ON "workspaces" USING btree (lower("name" COLLATE "C"));--> statement-breakpoint
CREATE UNIQUE INDEX "permissions_name_uq" ON "permissions" USING btree ("workspace_id",lower("name" COLLATE "C"));--> statement-breakpoint
CREATE UNIQUE INDEX "permissions_slug_uq" ON "permissions" USING btree ("workspace_id",lower("slug" COLLATE "C"));--> statement-breakpoint
CREATE UNIQUE INDEX "roles_name_uq" ON "roles" USING btree ("workspace_id",lower("name" COLLATE "C"));