-- Keeps workspace_usage (the quotas' counts and bytes, services/quotas) on every write to the
-- counted tables, whatever path makes it; then fills it from the records already there.
CREATE TRIGGER workspace_usage_keys_insert AFTER INSERT ON keys BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET keys = keys + (NEW.deleted_at IS NULL), bytes = bytes + (NEW.deleted_at IS NULL) * (256 + coalesce(length(CAST(NEW.name AS BLOB)), 0) + coalesce(length(CAST(NEW.meta AS BLOB)), 0) + 64 * ((SELECT count(*) FROM key_permissions d WHERE d.key_id = NEW.id) + (SELECT count(*) FROM key_roles d WHERE d.key_id = NEW.id)) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.key_id = NEW.id), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_keys_delete AFTER DELETE ON keys BEGIN
  UPDATE workspace_usage SET keys = keys - (OLD.deleted_at IS NULL), bytes = bytes - (OLD.deleted_at IS NULL) * (256 + coalesce(length(CAST(OLD.name AS BLOB)), 0) + coalesce(length(CAST(OLD.meta AS BLOB)), 0) + 64 * ((SELECT count(*) FROM key_permissions d WHERE d.key_id = OLD.id) + (SELECT count(*) FROM key_roles d WHERE d.key_id = OLD.id)) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.key_id = OLD.id), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_keys_update AFTER UPDATE OF name, meta, deleted_at ON keys WHEN OLD.name IS NOT NEW.name OR OLD.meta IS NOT NEW.meta OR OLD.deleted_at IS NOT NEW.deleted_at BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET keys = keys + (NEW.deleted_at IS NULL) - (OLD.deleted_at IS NULL), bytes = bytes + (NEW.deleted_at IS NULL) * (256 + coalesce(length(CAST(NEW.name AS BLOB)), 0) + coalesce(length(CAST(NEW.meta AS BLOB)), 0) + 64 * ((SELECT count(*) FROM key_permissions d WHERE d.key_id = NEW.id) + (SELECT count(*) FROM key_roles d WHERE d.key_id = NEW.id)) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.key_id = NEW.id), 0)) - (OLD.deleted_at IS NULL) * (256 + coalesce(length(CAST(OLD.name AS BLOB)), 0) + coalesce(length(CAST(OLD.meta AS BLOB)), 0) + 64 * ((SELECT count(*) FROM key_permissions d WHERE d.key_id = OLD.id) + (SELECT count(*) FROM key_roles d WHERE d.key_id = OLD.id)) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.key_id = OLD.id), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_identities_insert AFTER INSERT ON identities BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET identities = identities + (NEW.deleted_at IS NULL), bytes = bytes + (NEW.deleted_at IS NULL) * (128 + coalesce(length(CAST(NEW.external_id AS BLOB)), 0) + coalesce(length(CAST(NEW.meta AS BLOB)), 0) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.identity_id = NEW.id), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_identities_delete AFTER DELETE ON identities BEGIN
  UPDATE workspace_usage SET identities = identities - (OLD.deleted_at IS NULL), bytes = bytes - (OLD.deleted_at IS NULL) * (128 + coalesce(length(CAST(OLD.external_id AS BLOB)), 0) + coalesce(length(CAST(OLD.meta AS BLOB)), 0) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.identity_id = OLD.id), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_identities_update AFTER UPDATE OF external_id, meta, deleted_at ON identities WHEN OLD.external_id IS NOT NEW.external_id OR OLD.meta IS NOT NEW.meta OR OLD.deleted_at IS NOT NEW.deleted_at BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET identities = identities + (NEW.deleted_at IS NULL) - (OLD.deleted_at IS NULL), bytes = bytes + (NEW.deleted_at IS NULL) * (128 + coalesce(length(CAST(NEW.external_id AS BLOB)), 0) + coalesce(length(CAST(NEW.meta AS BLOB)), 0) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.identity_id = NEW.id), 0)) - (OLD.deleted_at IS NULL) * (128 + coalesce(length(CAST(OLD.external_id AS BLOB)), 0) + coalesce(length(CAST(OLD.meta AS BLOB)), 0) + coalesce((SELECT sum(128 + coalesce(length(CAST(d.name AS BLOB)), 0)) FROM ratelimit_configs d WHERE d.identity_id = OLD.id), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_permissions_insert AFTER INSERT ON permissions BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET permissions = permissions + 1, bytes = bytes + 1 * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0) + coalesce(length(CAST(NEW.slug AS BLOB)), 0) + coalesce(length(CAST(NEW.description AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_permissions_delete AFTER DELETE ON permissions BEGIN
  UPDATE workspace_usage SET permissions = permissions - 1, bytes = bytes - 1 * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0) + coalesce(length(CAST(OLD.slug AS BLOB)), 0) + coalesce(length(CAST(OLD.description AS BLOB)), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_permissions_update AFTER UPDATE OF name, slug, description ON permissions WHEN OLD.name IS NOT NEW.name OR OLD.slug IS NOT NEW.slug OR OLD.description IS NOT NEW.description BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET permissions = permissions + 1 - 1, bytes = bytes + 1 * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0) + coalesce(length(CAST(NEW.slug AS BLOB)), 0) + coalesce(length(CAST(NEW.description AS BLOB)), 0)) - 1 * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0) + coalesce(length(CAST(OLD.slug AS BLOB)), 0) + coalesce(length(CAST(OLD.description AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_roles_insert AFTER INSERT ON roles BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET roles = roles + 1, bytes = bytes + 1 * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0) + coalesce(length(CAST(NEW.description AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_roles_delete AFTER DELETE ON roles BEGIN
  UPDATE workspace_usage SET roles = roles - 1, bytes = bytes - 1 * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0) + coalesce(length(CAST(OLD.description AS BLOB)), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_roles_update AFTER UPDATE OF name, description ON roles WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET roles = roles + 1 - 1, bytes = bytes + 1 * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0) + coalesce(length(CAST(NEW.description AS BLOB)), 0)) - 1 * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0) + coalesce(length(CAST(OLD.description AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_namespaces_insert AFTER INSERT ON ratelimit_namespaces BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET namespaces = namespaces + (NEW.deleted_at IS NULL), bytes = bytes + (NEW.deleted_at IS NULL) * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_namespaces_delete AFTER DELETE ON ratelimit_namespaces BEGIN
  UPDATE workspace_usage SET namespaces = namespaces - (OLD.deleted_at IS NULL), bytes = bytes - (OLD.deleted_at IS NULL) * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_namespaces_update AFTER UPDATE OF name, deleted_at ON ratelimit_namespaces WHEN OLD.name IS NOT NEW.name OR OLD.deleted_at IS NOT NEW.deleted_at BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET namespaces = namespaces + (NEW.deleted_at IS NULL) - (OLD.deleted_at IS NULL), bytes = bytes + (NEW.deleted_at IS NULL) * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0)) - (OLD.deleted_at IS NULL) * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_overrides_insert AFTER INSERT ON ratelimit_overrides BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + (NEW.deleted_at IS NULL) * (128 + coalesce(length(CAST(NEW.identifier AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_overrides_delete AFTER DELETE ON ratelimit_overrides BEGIN
  UPDATE workspace_usage SET bytes = bytes - (OLD.deleted_at IS NULL) * (128 + coalesce(length(CAST(OLD.identifier AS BLOB)), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_overrides_update AFTER UPDATE OF identifier, deleted_at ON ratelimit_overrides WHEN OLD.identifier IS NOT NEW.identifier OR OLD.deleted_at IS NOT NEW.deleted_at BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + (NEW.deleted_at IS NULL) * (128 + coalesce(length(CAST(NEW.identifier AS BLOB)), 0)) - (OLD.deleted_at IS NULL) * (128 + coalesce(length(CAST(OLD.identifier AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_configs_insert AFTER INSERT ON ratelimit_configs BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = NEW.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_configs_delete AFTER DELETE ON ratelimit_configs BEGIN
  UPDATE workspace_usage SET bytes = bytes - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = OLD.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0)) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_configs_update AFTER UPDATE OF name ON ratelimit_configs WHEN OLD.name IS NOT NEW.name BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = NEW.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(length(CAST(NEW.name AS BLOB)), 0)) - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = OLD.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(length(CAST(OLD.name AS BLOB)), 0)) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_key_permissions_insert AFTER INSERT ON key_permissions BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL)) * (64) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_key_permissions_delete AFTER DELETE ON key_permissions BEGIN
  UPDATE workspace_usage SET bytes = bytes - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL)) * (64) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_key_roles_insert AFTER INSERT ON key_roles BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL)) * (64) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_key_roles_delete AFTER DELETE ON key_roles BEGIN
  UPDATE workspace_usage SET bytes = bytes - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL)) * (64) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_role_permissions_insert AFTER INSERT ON role_permissions BEGIN
  INSERT OR IGNORE INTO workspace_usage (workspace_id) VALUES (NEW.workspace_id);
  UPDATE workspace_usage SET bytes = bytes + 1 * (64) WHERE workspace_id = NEW.workspace_id;
END;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_role_permissions_delete AFTER DELETE ON role_permissions BEGIN
  UPDATE workspace_usage SET bytes = bytes - 1 * (64) WHERE workspace_id = OLD.workspace_id;
END;
--> statement-breakpoint
INSERT OR REPLACE INTO workspace_usage (workspace_id, keys, identities, permissions, roles, namespaces, bytes)
SELECT w.id,
  (SELECT count(*) FROM keys r WHERE r.workspace_id = w.id AND r.deleted_at IS NULL),
  (SELECT count(*) FROM identities r WHERE r.workspace_id = w.id AND r.deleted_at IS NULL),
  (SELECT count(*) FROM permissions r WHERE r.workspace_id = w.id),
  (SELECT count(*) FROM roles r WHERE r.workspace_id = w.id),
  (SELECT count(*) FROM ratelimit_namespaces r WHERE r.workspace_id = w.id AND r.deleted_at IS NULL),
  coalesce((SELECT sum((r.deleted_at IS NULL) * (256 + coalesce(length(CAST(r.name AS BLOB)), 0) + coalesce(length(CAST(r.meta AS BLOB)), 0))) FROM keys r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum((r.deleted_at IS NULL) * (128 + coalesce(length(CAST(r.external_id AS BLOB)), 0) + coalesce(length(CAST(r.meta AS BLOB)), 0))) FROM identities r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(1 * (128 + coalesce(length(CAST(r.name AS BLOB)), 0) + coalesce(length(CAST(r.slug AS BLOB)), 0) + coalesce(length(CAST(r.description AS BLOB)), 0))) FROM permissions r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(1 * (128 + coalesce(length(CAST(r.name AS BLOB)), 0) + coalesce(length(CAST(r.description AS BLOB)), 0))) FROM roles r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum((r.deleted_at IS NULL) * (128 + coalesce(length(CAST(r.name AS BLOB)), 0))) FROM ratelimit_namespaces r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum((r.deleted_at IS NULL) * (128 + coalesce(length(CAST(r.identifier AS BLOB)), 0))) FROM ratelimit_overrides r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(((SELECT count(*) FROM keys o WHERE o.id = r.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = r.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(length(CAST(r.name AS BLOB)), 0))) FROM ratelimit_configs r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(((SELECT count(*) FROM keys o WHERE o.id = r.key_id AND o.deleted_at IS NULL)) * (64)) FROM key_permissions r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(((SELECT count(*) FROM keys o WHERE o.id = r.key_id AND o.deleted_at IS NULL)) * (64)) FROM key_roles r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(1 * (64)) FROM role_permissions r WHERE r.workspace_id = w.id), 0)
FROM workspaces w;
