-- name: BlobPut :exec
INSERT INTO blobs(hash, content_type, size, data, created_at)
VALUES (@hash, @content_type, @size, @data, @created_at)
ON CONFLICT(hash) DO NOTHING;

-- name: BlobSize :one
SELECT size FROM blobs WHERE hash = @hash;

-- One more reference from the organisation to a blob; refs 1 means the
-- blob is new to the organisation.
-- name: OrgBlobAttach :one
INSERT INTO organisation_blobs(organisation_id, hash, refs) VALUES (@organisation_id, @hash, 1)
ON CONFLICT(organisation_id, hash) DO UPDATE SET refs = refs + 1
RETURNING refs;

-- name: OrgBlobDetach :one
UPDATE organisation_blobs SET refs = refs - 1
WHERE organisation_id = @organisation_id AND hash = @hash
RETURNING refs;

-- name: OrgBlobForget :exec
DELETE FROM organisation_blobs WHERE organisation_id = @organisation_id AND hash = @hash AND refs <= 0;

-- name: OrgStorageAdd :exec
UPDATE organisations SET storage_usage = storage_usage + @delta WHERE id = @id;

-- What storage_usage should be, for tests and repairs: the distinct blobs
-- held, plus the document chunks the organisation stored first.
-- name: OrgStorageRecount :one
SELECT CAST(coalesce((SELECT sum(b.size) FROM organisation_blobs ob JOIN blobs b ON b.hash = ob.hash
                      WHERE ob.organisation_id = @organisation_id), 0)
          + coalesce((SELECT bytes FROM organisation_document_storage WHERE organisation_id = @organisation_id), 0) AS INTEGER);

-- name: OrgIconSet :exec
UPDATE organisations SET icon_hash = @hash WHERE id = @id;

-- name: OrgBannerSet :exec
UPDATE organisations SET banner_hash = @hash WHERE id = @id;

-- name: OrgLogoSet :exec
UPDATE organisations SET logo_hash = @hash WHERE id = @id;

-- A blob served as an organisation image only while a live organisation
-- shows it.
-- name: OrgImageBlobGet :one
SELECT b.* FROM blobs b
WHERE b.hash = @hash
  AND EXISTS (SELECT 1 FROM organisations o WHERE o.deleted_at IS NULL
              AND (o.icon_hash = b.hash OR o.banner_hash = b.hash OR o.logo_hash = b.hash));

-- is_verified follows the domains: a verified and approved one.
-- name: OrgVerifiedRefresh :exec
UPDATE organisations SET is_verified = EXISTS (
    SELECT 1 FROM organisation_domains d WHERE d.organisation_id = organisations.id AND d.is_verified AND d.is_approved)
WHERE organisations.id = @id;

-- name: OrgProtectedSet :exec
UPDATE organisations SET is_protected = @is_protected WHERE id = @id AND deleted_at IS NULL;
