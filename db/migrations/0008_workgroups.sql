-- Workgroups and their teams (issue 9). A team member must be a member of
-- the organisation; removing the member removes their team places too.
CREATE TABLE workgroups (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX workgroups_organisation ON workgroups(organisation_id);

CREATE TABLE teams (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    workgroup_id INTEGER NOT NULL REFERENCES workgroups(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    color TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX teams_workgroup ON teams(workgroup_id);

CREATE TABLE team_members (
    team_id INTEGER NOT NULL REFERENCES teams(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    is_leader BOOLEAN NOT NULL DEFAULT 0,
    joined_at TEXT NOT NULL,
    PRIMARY KEY (team_id, user_id)
) WITHOUT ROWID;
CREATE INDEX team_members_user ON team_members(organisation_id, user_id);
