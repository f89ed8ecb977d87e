-- Work items (issue 14). Numbers are drawn inside the creating transaction
-- from the type's prefix (prefix_id records which) or from the
-- organisation's "work_item" counter (prefix_id NULL): unique per source.
-- document_id, asset_group_id and fleet_id name rows of areas built
-- elsewhere, so they carry no foreign key here (docs/workitems.md).
CREATE TABLE work_items (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    type_id INTEGER NOT NULL REFERENCES work_item_types(id),
    prefix_id INTEGER REFERENCES prefixes(id),
    number INTEGER NOT NULL,
    formatted_number TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    project_id INTEGER REFERENCES projects(id),
    milestone_id INTEGER REFERENCES project_milestones(id),
    package_id INTEGER REFERENCES project_packages(id),
    document_id INTEGER,
    asset_group_id INTEGER,
    fleet_id INTEGER,
    location_id INTEGER REFERENCES locations(id),
    sub_location_id INTEGER REFERENCES sub_locations(id),
    start_at TEXT,
    finish_at TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id),
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id)
);
CREATE UNIQUE INDEX work_items_number ON work_items(organisation_id, coalesce(prefix_id, 0), number);
CREATE INDEX work_items_organisation ON work_items(organisation_id, status);
CREATE INDEX work_items_project ON work_items(project_id, status) WHERE project_id IS NOT NULL;

CREATE TABLE work_item_assignees (
    work_item_id INTEGER NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    PRIMARY KEY (work_item_id, user_id)
) WITHOUT ROWID;
CREATE INDEX work_item_assignees_user ON work_item_assignees(user_id, work_item_id);

-- Followers of a work item, told when its status changes.
CREATE TABLE work_item_subscriptions (
    work_item_id INTEGER NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (work_item_id, user_id)
) WITHOUT ROWID;
CREATE INDEX work_item_subscriptions_user ON work_item_subscriptions(user_id, work_item_id);

-- Open and closed work items per type in a project or milestone (scope_id
-- is either's id): work_item_types_count. These and the projects' and
-- milestones' open/closed columns are kept by the triggers below, whatever
-- writes work_items, so no read ever counts.
CREATE TABLE work_item_type_counts (
    scope_id INTEGER NOT NULL,
    type_id INTEGER NOT NULL,
    open_count INTEGER NOT NULL DEFAULT 0,
    closed_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_id, type_id)
) WITHOUT ROWID;

CREATE TRIGGER work_items_count_insert AFTER INSERT ON work_items BEGIN
    UPDATE projects SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.milestone_id;
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    SELECT s.value, NEW.type_id, NEW.status = 'open', NEW.status = 'closed'
    FROM json_each(json_array(NEW.project_id, NEW.milestone_id)) s WHERE s.value IS NOT NULL
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_count_update AFTER UPDATE OF status, type_id, project_id, milestone_id ON work_items
WHEN OLD.status <> NEW.status OR OLD.type_id <> NEW.type_id
  OR OLD.project_id IS NOT NEW.project_id OR OLD.milestone_id IS NOT NEW.milestone_id BEGIN
    UPDATE projects SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.milestone_id;
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id IN (OLD.project_id, OLD.milestone_id) AND type_id = OLD.type_id;
    UPDATE projects SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.milestone_id;
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    SELECT s.value, NEW.type_id, NEW.status = 'open', NEW.status = 'closed'
    FROM json_each(json_array(NEW.project_id, NEW.milestone_id)) s WHERE s.value IS NOT NULL
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_count_delete AFTER DELETE ON work_items BEGIN
    UPDATE projects SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.milestone_id;
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id IN (OLD.project_id, OLD.milestone_id) AND type_id = OLD.type_id;
END;
