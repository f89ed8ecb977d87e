-- The work items each user sees in GET /users/@me/work-items (assigned, or
-- invited through a schedule of the work item and not declined), with the
-- columns its filters read, clustered by user: a request reads one range of
-- this table instead of looking each work item up (issue 14). Kept by
-- triggers on every source of membership and on the copied columns.
CREATE TABLE user_work_items (
    user_id INTEGER NOT NULL,
    work_item_id INTEGER NOT NULL,
    organisation_id INTEGER NOT NULL,
    status TEXT NOT NULL,
    type_id INTEGER NOT NULL,
    project_id INTEGER,
    document_id INTEGER,
    fleet_id INTEGER,
    location_id INTEGER,
    asset_group_id INTEGER,
    start_at TEXT,
    finish_at TEXT,
    created_at TEXT NOT NULL,
    closed_at TEXT,
    PRIMARY KEY (user_id, work_item_id)
) WITHOUT ROWID;
CREATE INDEX user_work_items_item ON user_work_items(work_item_id);

-- Membership of (user U, work item W), spelled out in each trigger below:
-- EXISTS an assignee row (W, U), or EXISTS a non-declined invitation of U to
-- a schedule of W.

CREATE TRIGGER user_work_items_assign AFTER INSERT ON work_item_assignees BEGIN
    INSERT OR IGNORE INTO user_work_items SELECT NEW.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
        w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
    FROM work_items w WHERE w.id = NEW.work_item_id;
END;

CREATE TRIGGER user_work_items_unassign AFTER DELETE ON work_item_assignees BEGIN
    DELETE FROM user_work_items WHERE user_id = OLD.user_id AND work_item_id = OLD.work_item_id
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = OLD.work_item_id AND si.user_id = OLD.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_invite AFTER INSERT ON schedule_invitees WHEN NEW.status <> 'declined' BEGIN
    INSERT OR IGNORE INTO user_work_items SELECT NEW.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
        w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
    FROM schedules sc JOIN work_items w ON w.id = sc.work_item_id WHERE sc.id = NEW.schedule_id;
END;

CREATE TRIGGER user_work_items_invite_status AFTER UPDATE OF status ON schedule_invitees BEGIN
    INSERT OR IGNORE INTO user_work_items SELECT NEW.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
        w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
    FROM schedules sc JOIN work_items w ON w.id = sc.work_item_id WHERE sc.id = NEW.schedule_id AND NEW.status <> 'declined';
    DELETE FROM user_work_items WHERE user_id = NEW.user_id
        AND work_item_id = (SELECT work_item_id FROM schedules WHERE id = NEW.schedule_id)
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = user_work_items.work_item_id AND a.user_id = NEW.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = user_work_items.work_item_id AND si.user_id = NEW.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_uninvite AFTER DELETE ON schedule_invitees BEGIN
    DELETE FROM user_work_items WHERE user_id = OLD.user_id
        AND work_item_id = (SELECT work_item_id FROM schedules WHERE id = OLD.schedule_id)
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = user_work_items.work_item_id AND a.user_id = OLD.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = user_work_items.work_item_id AND si.user_id = OLD.user_id AND si.status <> 'declined');
END;

-- A deleted schedule's invitations end with it (its invitees go by cascade,
-- possibly after their trigger could still see the schedule).
CREATE TRIGGER user_work_items_schedule_delete AFTER DELETE ON schedules WHEN OLD.work_item_id IS NOT NULL BEGIN
    DELETE FROM user_work_items WHERE work_item_id = OLD.work_item_id
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = OLD.work_item_id AND a.user_id = user_work_items.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = OLD.work_item_id AND si.user_id = user_work_items.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_copy AFTER UPDATE OF organisation_id, status, type_id, project_id, document_id, fleet_id,
    location_id, asset_group_id, start_at, finish_at, created_at, closed_at ON work_items BEGIN
    UPDATE user_work_items SET organisation_id = NEW.organisation_id, status = NEW.status, type_id = NEW.type_id,
        project_id = NEW.project_id, document_id = NEW.document_id, fleet_id = NEW.fleet_id, location_id = NEW.location_id,
        asset_group_id = NEW.asset_group_id, start_at = NEW.start_at, finish_at = NEW.finish_at, created_at = NEW.created_at,
        closed_at = NEW.closed_at
    WHERE work_item_id = NEW.id;
END;

CREATE TRIGGER user_work_items_item_delete AFTER DELETE ON work_items BEGIN
    DELETE FROM user_work_items WHERE work_item_id = OLD.id;
END;

INSERT OR IGNORE INTO user_work_items SELECT a.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
    w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
FROM work_item_assignees a JOIN work_items w ON w.id = a.work_item_id;
INSERT OR IGNORE INTO user_work_items SELECT si.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
    w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id JOIN work_items w ON w.id = sc.work_item_id
WHERE si.status <> 'declined';
