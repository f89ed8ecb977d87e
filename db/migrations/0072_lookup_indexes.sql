-- Lookups that read a whole table, every organisation's rows, to find a
-- few (TestQueryPlansSeek): each gets the index its condition needs. The
-- partial ones leave out the rows the lookups never ask for.
CREATE INDEX document_merge_requests_open_between ON document_merge_requests(from_branch_id, to_branch_id) WHERE status = 'open';
CREATE INDEX sub_locations_organisation ON sub_locations(organisation_id, id);
CREATE INDEX document_field_bindings_document ON document_field_bindings(document_id);
CREATE INDEX user_identities_user ON user_identities(user_id);
CREATE INDEX toolbox_users_schedule ON toolbox_users(schedule_id) WHERE schedule_id IS NOT NULL;
CREATE INDEX toolboxes_workgroup ON toolboxes(workgroup_id) WHERE workgroup_id IS NOT NULL;
CREATE INDEX work_items_fleet ON work_items(fleet_id) WHERE fleet_id IS NOT NULL;
CREATE INDEX organisation_members_notification_email ON organisation_members(notification_email_id) WHERE notification_email_id IS NOT NULL;
CREATE INDEX organisations_icon ON organisations(icon_hash) WHERE icon_hash IS NOT NULL;
CREATE INDEX organisations_banner ON organisations(banner_hash) WHERE banner_hash IS NOT NULL;
CREATE INDEX organisations_logo ON organisations(logo_hash) WHERE logo_hash IS NOT NULL;
