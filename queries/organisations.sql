-- name: OrganisationCreate :one
INSERT INTO organisations(id, name, description, location, code, owned_by, created_at)
VALUES (@id, @name, @description, @location, @code, @owned_by, @created_at)
RETURNING *;

-- name: OrganisationGet :one
SELECT * FROM organisations WHERE id = @id AND deleted_at IS NULL;

-- name: MemberCreate :exec
INSERT INTO organisation_members(organisation_id, user_id, pending, joined_at)
VALUES (@organisation_id, @user_id, @pending, @joined_at);

-- name: RoleCreate :one
INSERT INTO roles(id, organisation_id, name, description, sort_order, created_at)
VALUES (@id, @organisation_id, @name, @description, @sort_order, @created_at)
RETURNING *;

-- name: GrantPut :exec
INSERT INTO permission_grants(organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask)
VALUES (@organisation_id, @scope_type, @scope_id, @target_type, @target_id, @allow_mask, @deny_mask)
ON CONFLICT(scope_id, target_id) DO UPDATE SET allow_mask = excluded.allow_mask, deny_mask = excluded.deny_mask;

-- name: GrantDelete :exec
DELETE FROM permission_grants WHERE scope_id = @scope_id AND target_id = @target_id;

-- name: GrantListForScope :many
SELECT * FROM permission_grants WHERE scope_id = @scope_id ORDER BY target_type, target_id;

-- name: GrantGet :one
SELECT * FROM permission_grants WHERE scope_id = @scope_id AND target_id = @target_id;

-- What a grant target id names inside an organisation: one of its roles
-- (with its rank) or one of its members (with the rank of its highest role,
-- the largest integer when it holds none).
-- name: GrantTargetLookup :one
SELECT CAST('role' AS TEXT) AS target_type, sort_order AS role_rank, CAST(0 AS BOOLEAN) AS is_owner FROM roles
WHERE roles.id = @target_id AND roles.organisation_id = @organisation_id
UNION ALL
SELECT CAST('user' AS TEXT),
       CAST(coalesce((SELECT min(r.sort_order) FROM member_roles mr JOIN roles r ON r.id = mr.role_id
                      WHERE mr.organisation_id = m.organisation_id AND mr.user_id = m.user_id),
                     9223372036854775807) AS INTEGER),
       CAST(m.user_id = (SELECT o.owned_by FROM organisations o WHERE o.id = m.organisation_id) AS BOOLEAN)
FROM organisation_members m
WHERE m.user_id = @target_id AND m.organisation_id = @organisation_id
LIMIT 1;

-- name: OrganisationUpdate :one
UPDATE organisations
SET name = @name, description = @description, location = @location, code = @code,
    default_branch_name = @default_branch_name, member_approval = @member_approval,
    restrict_email_domain = @restrict_email_domain
WHERE id = @id AND deleted_at IS NULL
RETURNING *;

-- name: OrganisationSoftDelete :exec
UPDATE organisations SET deleted_at = @deleted_at, deleted_by = @deleted_by
WHERE id = @id AND deleted_at IS NULL;

-- Members shown in member_count: pending members are not (yet) members.
-- name: OrganisationMemberCount :one
SELECT count(*) FROM organisation_members WHERE organisation_id = @organisation_id AND NOT pending;

-- Members counted against the quota: pending members hold a seat.
-- name: OrganisationSeatCount :one
SELECT count(*) FROM organisation_members WHERE organisation_id = @organisation_id;

-- The caller's organisations, pending memberships included.
-- name: OrganisationListForUser :many
SELECT sqlc.embed(organisations), m.pending, m.joined_at, m.notification_email_id,
       (SELECT count(*) FROM organisation_members c WHERE c.organisation_id = organisations.id AND NOT c.pending) AS member_count
FROM organisation_members m
JOIN organisations ON organisations.id = m.organisation_id
WHERE m.user_id = @user_id AND organisations.deleted_at IS NULL
ORDER BY organisations.id;

-- name: MemberGet :one
SELECT sqlc.embed(users), m.pending, m.joined_at
FROM organisation_members m
JOIN users ON users.id = m.user_id
WHERE m.organisation_id = @organisation_id AND m.user_id = @user_id;

-- Members whose first name, last name or e-mail starts with prefix ('' = all).
-- name: MemberList :many
SELECT sqlc.embed(users), m.pending, m.joined_at
FROM organisation_members m
JOIN users ON users.id = m.user_id
WHERE m.organisation_id = @organisation_id
  AND (CAST(@prefix AS TEXT) = ''
       OR lower(substr(users.first_name, 1, length(CAST(@prefix AS TEXT)))) = lower(CAST(@prefix AS TEXT))
       OR lower(substr(users.last_name, 1, length(CAST(@prefix AS TEXT)))) = lower(CAST(@prefix AS TEXT))
       OR lower(substr(users.email, 1, length(CAST(@prefix AS TEXT)))) = lower(CAST(@prefix AS TEXT)))
ORDER BY m.joined_at, m.user_id;

-- name: MemberApprove :exec
UPDATE organisation_members SET pending = 0
WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: MemberDelete :execrows
DELETE FROM organisation_members WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: MemberRolesDeleteForUser :exec
DELETE FROM member_roles WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- Every grant naming the user in the organisation, in any scope.
-- name: GrantDeleteForTarget :exec
DELETE FROM permission_grants WHERE organisation_id = @organisation_id AND target_id = @target_id;

-- Banning again updates the reason; was_member stays true once set.
-- name: BanPut :one
INSERT INTO organisation_bans(organisation_id, user_id, reason, banned_at, banned_by, was_member)
VALUES (@organisation_id, @user_id, @reason, @banned_at, @banned_by, @was_member)
ON CONFLICT(organisation_id, user_id) DO UPDATE SET reason = excluded.reason,
    was_member = organisation_bans.was_member OR excluded.was_member
RETURNING *;

-- The bans with each user's row where the viewer may see it: the user was a
-- member when banned, or shares an organisation with the viewer now.
-- name: BanList :many
SELECT b.user_id, b.reason, b.banned_at,
       CAST(u.id IS NOT NULL AND (b.was_member OR EXISTS (
           SELECT 1 FROM organisation_members a
           JOIN organisation_members v ON v.organisation_id = a.organisation_id
           JOIN organisations o ON o.id = a.organisation_id AND o.deleted_at IS NULL
           WHERE a.user_id = b.user_id AND NOT a.pending AND v.user_id = @viewer_id AND NOT v.pending
       )) AS BOOLEAN) AS visible
FROM organisation_bans b
LEFT JOIN users u ON u.id = b.user_id
WHERE b.organisation_id = @organisation_id
ORDER BY b.banned_at, b.user_id;

-- name: UserSharesOrganisation :one
SELECT EXISTS (
    SELECT 1 FROM organisation_members a
    JOIN organisation_members v ON v.organisation_id = a.organisation_id
    JOIN organisations o ON o.id = a.organisation_id AND o.deleted_at IS NULL
    WHERE a.user_id = @user_id AND NOT a.pending AND v.user_id = @viewer_id AND NOT v.pending
);

-- name: BanExists :one
SELECT count(*) FROM organisation_bans WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: BanDelete :execrows
DELETE FROM organisation_bans WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: DomainCreate :one
INSERT INTO organisation_domains(id, organisation_id, domain, challenge_token, created_at)
VALUES (@id, @organisation_id, @domain, @challenge_token, @created_at)
RETURNING *;

-- name: DomainList :many
SELECT * FROM organisation_domains WHERE organisation_id = @organisation_id ORDER BY id;

-- name: DomainGet :one
SELECT * FROM organisation_domains WHERE id = @id AND organisation_id = @organisation_id;

-- name: DomainSetVerified :one
UPDATE organisation_domains SET is_verified = 1
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: DomainSetApproved :one
UPDATE organisation_domains SET is_approved = @is_approved
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: DomainDelete :exec
DELETE FROM organisation_domains WHERE id = @id AND organisation_id = @organisation_id;

-- name: DomainApprovedCount :one
SELECT count(*) FROM organisation_domains
WHERE organisation_id = @organisation_id AND is_verified AND is_approved;

-- name: DomainVerifiedCount :one
SELECT count(*) FROM organisation_domains
WHERE organisation_id = @organisation_id AND domain = @domain AND is_verified;

-- The user's verified addresses whose domain part is the given domain.
-- name: UserEmailVerifiedOnDomain :one
SELECT count(*) FROM user_emails
WHERE user_id = @user_id AND is_verified
  AND lower(substr(email, instr(email, '@') + 1)) = lower(@domain);

-- The user's verified addresses on one of the organisation's approved domains.
-- name: UserEmailVerifiedOnApprovedDomain :one
SELECT count(*) FROM user_emails e
JOIN organisation_domains d ON d.organisation_id = @organisation_id AND d.is_verified AND d.is_approved
  AND lower(d.domain) = lower(substr(e.email, instr(e.email, '@') + 1))
WHERE e.user_id = @user_id AND e.is_verified;

-- name: UserEmailVerifiedCount :one
SELECT count(*) FROM user_emails WHERE user_id = @user_id AND is_verified AND email = @email;
