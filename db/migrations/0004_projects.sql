-- Projects with their milestones and packages. Counters are kept on the rows
-- so lists never count per row; later areas (work items, documents) update
-- the work item and document counters.
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    readme TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    open_milestone_count INTEGER NOT NULL DEFAULT 0,
    closed_milestone_count INTEGER NOT NULL DEFAULT 0,
    open_work_item_count INTEGER NOT NULL DEFAULT 0,
    closed_work_item_count INTEGER NOT NULL DEFAULT 0,
    document_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id)
);
CREATE INDEX projects_organisation ON projects(organisation_id);
-- Quota counts and status filters read (organisation, status) in id order.
CREATE INDEX projects_organisation_status ON projects(organisation_id, status);

-- Projects per organisation and status, kept by triggers whatever writes the
-- projects, so list totals and the quota read a row instead of counting.
CREATE TABLE project_status_counts (
    organisation_id INTEGER NOT NULL,
    status TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, status)
) WITHOUT ROWID;
CREATE TRIGGER projects_count_insert AFTER INSERT ON projects BEGIN
    INSERT INTO project_status_counts(organisation_id, status, n) VALUES (NEW.organisation_id, NEW.status, 1)
    ON CONFLICT(organisation_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER projects_count_update AFTER UPDATE OF organisation_id, status ON projects
WHEN OLD.organisation_id <> NEW.organisation_id OR OLD.status <> NEW.status BEGIN
    UPDATE project_status_counts SET n = n - 1 WHERE organisation_id = OLD.organisation_id AND status = OLD.status;
    INSERT INTO project_status_counts(organisation_id, status, n) VALUES (NEW.organisation_id, NEW.status, 1)
    ON CONFLICT(organisation_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER projects_count_delete AFTER DELETE ON projects BEGIN
    UPDATE project_status_counts SET n = n - 1 WHERE organisation_id = OLD.organisation_id AND status = OLD.status;
END;

CREATE TABLE project_milestones (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    due_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    open_work_item_count INTEGER NOT NULL DEFAULT 0,
    closed_work_item_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id)
);
CREATE INDEX project_milestones_project ON project_milestones(project_id, status);

CREATE TABLE project_packages (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX project_packages_project ON project_packages(project_id);

-- Project and package lists look up the grants that apply to one caller in
-- one scope type (their own, their roles', @everyone's) without reading every
-- grant of the organisation. The partial index finds the few grants that deny
-- something, which are all that can hide a project when the organisation
-- layer already allows viewing.
CREATE INDEX permission_grants_target ON permission_grants(organisation_id, scope_type, target_id);
CREATE INDEX permission_grants_denying ON permission_grants(organisation_id, scope_type, target_id) WHERE deny_mask <> 0;
