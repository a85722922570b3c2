-- Keeps workspace_usage (the quotas' counts and bytes, services/quotas) on every write to the
-- counted tables, whatever path makes it; then fills it from the records already there.
CREATE FUNCTION workspace_usage_keys() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END) * (256 + coalesce(octet_length(OLD.name), 0) + coalesce(octet_length(OLD.meta), 0) + 64 * ((SELECT count(*) FROM key_permissions d WHERE d.key_id = OLD.id) + (SELECT count(*) FROM key_roles d WHERE d.key_id = OLD.id)) + coalesce((SELECT sum(128 + coalesce(octet_length(d.name), 0)) FROM ratelimit_configs d WHERE d.key_id = OLD.id), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END) * (256 + coalesce(octet_length(NEW.name), 0) + coalesce(octet_length(NEW.meta), 0) + 64 * ((SELECT count(*) FROM key_permissions d WHERE d.key_id = NEW.id) + (SELECT count(*) FROM key_roles d WHERE d.key_id = NEW.id)) + coalesce((SELECT sum(128 + coalesce(octet_length(d.name), 0)) FROM ratelimit_configs d WHERE d.key_id = NEW.id), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, keys, bytes) VALUES (ws, counted, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET keys = workspace_usage.keys + counted, bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_keys AFTER INSERT OR DELETE OR UPDATE OF name, meta, deleted_at ON keys FOR EACH ROW EXECUTE FUNCTION workspace_usage_keys();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_identities() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(OLD.external_id), 0) + coalesce(octet_length(OLD.meta), 0) + coalesce((SELECT sum(128 + coalesce(octet_length(d.name), 0)) FROM ratelimit_configs d WHERE d.identity_id = OLD.id), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(NEW.external_id), 0) + coalesce(octet_length(NEW.meta), 0) + coalesce((SELECT sum(128 + coalesce(octet_length(d.name), 0)) FROM ratelimit_configs d WHERE d.identity_id = NEW.id), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, identities, bytes) VALUES (ws, counted, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET identities = workspace_usage.identities + counted, bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_identities AFTER INSERT OR DELETE OR UPDATE OF external_id, meta, deleted_at ON identities FOR EACH ROW EXECUTE FUNCTION workspace_usage_identities();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_permissions() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - 1;
    sized := sized - 1 * (128 + coalesce(octet_length(OLD.name), 0) + coalesce(octet_length(OLD.slug), 0) + coalesce(octet_length(OLD.description), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + 1;
    sized := sized + 1 * (128 + coalesce(octet_length(NEW.name), 0) + coalesce(octet_length(NEW.slug), 0) + coalesce(octet_length(NEW.description), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, permissions, bytes) VALUES (ws, counted, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET permissions = workspace_usage.permissions + counted, bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_permissions AFTER INSERT OR DELETE OR UPDATE OF name, slug, description ON permissions FOR EACH ROW EXECUTE FUNCTION workspace_usage_permissions();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_roles() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - 1;
    sized := sized - 1 * (128 + coalesce(octet_length(OLD.name), 0) + coalesce(octet_length(OLD.description), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + 1;
    sized := sized + 1 * (128 + coalesce(octet_length(NEW.name), 0) + coalesce(octet_length(NEW.description), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, roles, bytes) VALUES (ws, counted, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET roles = workspace_usage.roles + counted, bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_roles AFTER INSERT OR DELETE OR UPDATE OF name, description ON roles FOR EACH ROW EXECUTE FUNCTION workspace_usage_roles();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_ratelimit_namespaces() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(OLD.name), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(NEW.name), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, namespaces, bytes) VALUES (ws, counted, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET namespaces = workspace_usage.namespaces + counted, bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_namespaces AFTER INSERT OR DELETE OR UPDATE OF name, deleted_at ON ratelimit_namespaces FOR EACH ROW EXECUTE FUNCTION workspace_usage_ratelimit_namespaces();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_ratelimit_overrides() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(OLD.identifier), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END);
    sized := sized + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(NEW.identifier), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, bytes) VALUES (ws, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_overrides AFTER INSERT OR DELETE OR UPDATE OF identifier, deleted_at ON ratelimit_overrides FOR EACH ROW EXECUTE FUNCTION workspace_usage_ratelimit_overrides();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_ratelimit_configs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = OLD.identity_id AND o.deleted_at IS NULL));
    sized := sized - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = OLD.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(octet_length(OLD.name), 0));
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = NEW.identity_id AND o.deleted_at IS NULL));
    sized := sized + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = NEW.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(octet_length(NEW.name), 0));
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, bytes) VALUES (ws, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_ratelimit_configs AFTER INSERT OR DELETE OR UPDATE OF name ON ratelimit_configs FOR EACH ROW EXECUTE FUNCTION workspace_usage_ratelimit_configs();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_key_permissions() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL));
    sized := sized - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL)) * (64);
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL));
    sized := sized + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL)) * (64);
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, bytes) VALUES (ws, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_key_permissions AFTER INSERT OR DELETE ON key_permissions FOR EACH ROW EXECUTE FUNCTION workspace_usage_key_permissions();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_key_roles() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL));
    sized := sized - ((SELECT count(*) FROM keys o WHERE o.id = OLD.key_id AND o.deleted_at IS NULL)) * (64);
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL));
    sized := sized + ((SELECT count(*) FROM keys o WHERE o.id = NEW.key_id AND o.deleted_at IS NULL)) * (64);
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, bytes) VALUES (ws, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_key_roles AFTER INSERT OR DELETE ON key_roles FOR EACH ROW EXECUTE FUNCTION workspace_usage_key_roles();
--> statement-breakpoint
CREATE FUNCTION workspace_usage_role_permissions() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted bigint := 0;
  sized bigint := 0;
  ws text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    counted := counted - 1;
    sized := sized - 1 * (64);
    ws := OLD.workspace_id;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    counted := counted + 1;
    sized := sized + 1 * (64);
    ws := NEW.workspace_id;
  END IF;
  IF counted <> 0 OR sized <> 0 THEN
    INSERT INTO workspace_usage AS workspace_usage (workspace_id, bytes) VALUES (ws, sized)
    ON CONFLICT (workspace_id) DO UPDATE SET bytes = workspace_usage.bytes + sized;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER workspace_usage_role_permissions AFTER INSERT OR DELETE ON role_permissions FOR EACH ROW EXECUTE FUNCTION workspace_usage_role_permissions();
--> statement-breakpoint
INSERT INTO workspace_usage (workspace_id, keys, identities, permissions, roles, namespaces, bytes)
SELECT w.id,
  (SELECT count(*) FROM keys r WHERE r.workspace_id = w.id AND r.deleted_at IS NULL),
  (SELECT count(*) FROM identities r WHERE r.workspace_id = w.id AND r.deleted_at IS NULL),
  (SELECT count(*) FROM permissions r WHERE r.workspace_id = w.id),
  (SELECT count(*) FROM roles r WHERE r.workspace_id = w.id),
  (SELECT count(*) FROM ratelimit_namespaces r WHERE r.workspace_id = w.id AND r.deleted_at IS NULL),
  coalesce((SELECT sum((CASE WHEN r.deleted_at IS NULL THEN 1 ELSE 0 END) * (256 + coalesce(octet_length(r.name), 0) + coalesce(octet_length(r.meta), 0))) FROM keys r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum((CASE WHEN r.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(r.external_id), 0) + coalesce(octet_length(r.meta), 0))) FROM identities r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(1 * (128 + coalesce(octet_length(r.name), 0) + coalesce(octet_length(r.slug), 0) + coalesce(octet_length(r.description), 0))) FROM permissions r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(1 * (128 + coalesce(octet_length(r.name), 0) + coalesce(octet_length(r.description), 0))) FROM roles r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum((CASE WHEN r.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(r.name), 0))) FROM ratelimit_namespaces r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum((CASE WHEN r.deleted_at IS NULL THEN 1 ELSE 0 END) * (128 + coalesce(octet_length(r.identifier), 0))) FROM ratelimit_overrides r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(((SELECT count(*) FROM keys o WHERE o.id = r.key_id AND o.deleted_at IS NULL) + (SELECT count(*) FROM identities o WHERE o.id = r.identity_id AND o.deleted_at IS NULL)) * (128 + coalesce(octet_length(r.name), 0))) FROM ratelimit_configs r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(((SELECT count(*) FROM keys o WHERE o.id = r.key_id AND o.deleted_at IS NULL)) * (64)) FROM key_permissions r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(((SELECT count(*) FROM keys o WHERE o.id = r.key_id AND o.deleted_at IS NULL)) * (64)) FROM key_roles r WHERE r.workspace_id = w.id), 0)
    + coalesce((SELECT sum(1 * (64)) FROM role_permissions r WHERE r.workspace_id = w.id), 0)
FROM workspaces w;
