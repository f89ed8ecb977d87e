-- A tag of the state an organisation's access is resolved from: its row,
-- members, roles, members' roles and organisation-scope grants. Every change
-- to them sets a new random tag, in the same transaction, so a write
-- transaction may reuse a caller's standing resolved at an equal tag instead
-- of reading it again (server/cache.go, writerStanding). Random rather than
-- counted: a rolled-back change takes its tag with it, and a later change
-- must not reuse that tag for another state.
CREATE TABLE access_versions (
    organisation_id INTEGER PRIMARY KEY,
    tag INTEGER NOT NULL
);
CREATE TRIGGER organisations_access_insert AFTER INSERT ON organisations BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisations_access_update AFTER UPDATE ON organisations BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisations_access_delete AFTER DELETE ON organisations BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisation_members_access_insert AFTER INSERT ON organisation_members BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisation_members_access_update AFTER UPDATE ON organisation_members BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisation_members_access_delete AFTER DELETE ON organisation_members BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER roles_access_insert AFTER INSERT ON roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER roles_access_update AFTER UPDATE ON roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER roles_access_delete AFTER DELETE ON roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER member_roles_access_insert AFTER INSERT ON member_roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER member_roles_access_update AFTER UPDATE ON member_roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER member_roles_access_delete AFTER DELETE ON member_roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER permission_grants_access_insert AFTER INSERT ON permission_grants WHEN NEW.scope_type = 'organisation' BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER permission_grants_access_update AFTER UPDATE ON permission_grants WHEN NEW.scope_type = 'organisation' OR OLD.scope_type = 'organisation' BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER permission_grants_access_delete AFTER DELETE ON permission_grants WHEN OLD.scope_type = 'organisation' BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
