-- The blobs each organisation holds, with how many of its objects refer to
-- each, so storage_usage (the bytes of its distinct blobs) is kept current
-- on every upload and removal instead of recounted per read (issue 19).
CREATE TABLE organisation_blobs (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    hash TEXT NOT NULL REFERENCES blobs(hash),
    refs INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, hash)
) WITHOUT ROWID;
