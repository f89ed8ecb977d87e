-- permission_grants_target (organisation_id, scope_type, target_id) serves
-- every lookup by organisation the single-column index served; keeping both
-- cost every grant write (one per project created) a fourth b-tree.
DROP INDEX IF EXISTS permission_grants_organisation;
