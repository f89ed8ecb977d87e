package server

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"workspace/db"
)

// Asset logs with one attachment each, and asset subscriptions (allocation
// pools). operations-data.md "Assets"; decisions in docs/assets.md.

const (
	maxLogText       = 10000
	maxEmbed         = 2000
	maxLogAttachment = 20 << 20
	logTypeComment   = "comment"
)

type assetLogAttachmentJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	AssetLogID     db.ID  `json:"asset_log_id"`
	FileName       string `json:"file_name"`
}

type assetLogJSON struct {
	ID             db.ID                   `json:"id"`
	OrganisationID db.ID                   `json:"organisation_id"`
	AssetGroupID   db.ID                   `json:"asset_group_id"`
	Type           string                  `json:"type"`
	Log            string                  `json:"log"`
	LogHash        string                  `json:"log_hash"`
	Embed          *string                 `json:"embed"`
	Duration       *int64                  `json:"duration"`
	Latitude       *float64                `json:"latitude"`
	Longitude      *float64                `json:"longitude"`
	LoggedAt       string                  `json:"logged_at"`
	Attachment     *assetLogAttachmentJSON `json:"attachment"`
	CreatedBy      idJSON                  `json:"created_by"`
	UpdatedBy      idJSON                  `json:"updated_by"`
	CreatedAt      string                  `json:"created_at"`
	UpdatedAt      string                  `json:"updated_at"`
}

func toAssetLog(l db.AssetLog) assetLogJSON {
	out := assetLogJSON{ID: db.ID(l.ID), OrganisationID: db.ID(l.OrganisationID), AssetGroupID: db.ID(l.AssetGroupID), Type: l.Type,
		Log: l.Log, LogHash: l.LogHash, Embed: l.Embed, Duration: l.Duration, Latitude: l.Latitude, Longitude: l.Longitude,
		LoggedAt: l.LoggedAt, CreatedBy: idJSON{ID: db.ID(l.CreatedBy)}, UpdatedBy: idJSON{ID: db.ID(l.UpdatedBy)},
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
	if l.AttachmentID != nil && l.AttachmentName != nil {
		out.Attachment = &assetLogAttachmentJSON{ID: db.ID(*l.AttachmentID), OrganisationID: db.ID(l.OrganisationID),
			AssetLogID: db.ID(l.ID), FileName: *l.AttachmentName}
	}
	return out
}

// logHash is the SHA-256 of the log text, in hex.
func logHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

type assetLogBody struct {
	Type      *string      `json:"type"`
	Log       *string      `json:"log"`
	Embed     Opt[string]  `json:"embed"`
	Duration  Opt[int64]   `json:"duration"`
	Latitude  Opt[float64] `json:"latitude"`
	Longitude Opt[float64] `json:"longitude"`
	LoggedAt  *string      `json:"logged_at"`
}

var assetLogReadOnly = []string{"id", "organisation_id", "asset_group_id", "log_hash", "attachment", "created_by", "updated_by", "created_at", "updated_at"}

// apply validates the body over l (a new log's defaults or the current
// row): coordinates end both set or both null.
func (b *assetLogBody) apply(l *db.AssetLog) error {
	p := problems{}
	if b.Type != nil && *b.Type != logTypeComment {
		p.add("type", `must be "comment"`)
	}
	if b.Log != nil {
		l.Log = *b.Log
		p.length("log", l.Log, 1, maxLogText)
	}
	if b.Embed.Set {
		l.Embed = nil
		if !b.Embed.Null {
			p.length("embed", b.Embed.Value, 0, maxEmbed)
			l.Embed = &b.Embed.Value
		}
	}
	if b.Duration.Set {
		l.Duration = nil
		if !b.Duration.Null {
			if b.Duration.Value < 0 {
				p.add("duration", "must not be negative")
			}
			l.Duration = &b.Duration.Value
		}
	}
	setCoord := func(field string, o Opt[float64], dst **float64, limit float64) {
		if !o.Set {
			return
		}
		*dst = nil
		if !o.Null {
			if o.Value < -limit || o.Value > limit {
				p.add(field, "is out of range")
			}
			v := o.Value
			*dst = &v
		}
	}
	setCoord("latitude", b.Latitude, &l.Latitude, 90)
	setCoord("longitude", b.Longitude, &l.Longitude, 180)
	if (l.Latitude == nil) != (l.Longitude == nil) {
		p.add("latitude", "and longitude must be given together (or both null)")
	}
	if b.LoggedAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *b.LoggedAt)
		if err != nil {
			p.add("logged_at", "must be an RFC 3339 time")
		} else {
			l.LoggedAt = db.FormatTime(t)
		}
	}
	l.LogHash = logHash(l.Log)
	return p.err()
}

func (s *Server) assetLogCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetLogBody
	if err := rq.decodeCreate(&b, assetLogReadOnly...); err != nil {
		return err
	}
	if b.Log == nil {
		return fieldError("log", "is required")
	}
	l := db.AssetLog{Type: logTypeComment, LoggedAt: s.nowText()}
	if err := b.apply(&l); err != nil {
		return err
	}
	var out assetLogJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, false)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		now := s.nowText()
		created, err := q.AssetLogCreate(rq.ctx, db.AssetLogCreateParams{ID: s.store.IDs.Next(), OrganisationID: g.OrganisationID,
			AssetGroupID: g.ID, Type: l.Type, Log: l.Log, LogHash: l.LogHash, Embed: l.Embed, Duration: l.Duration,
			Latitude: l.Latitude, Longitude: l.Longitude, LoggedAt: l.LoggedAt, CreatedAt: now, CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		out = toAssetLog(created)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// assetLogList: a group's logs, newest first; members only (a fleet share
// opens assets and groups, not their logs).
func (s *Server) assetLogList(rq *request) error {
	return listPage(s, rq, listSpec[assetLogJSON]{Path: "id",
		Fields: db.FilterFields{"logged_at": {Column: "logged_at", Kind: db.FieldTime}, "type": {Column: "type", Kind: db.FieldString}},
		Scope: func(_ *sql.Tx, q *db.Queries, id int64, _ listQuery) (listSQL, error) {
			g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, false)
			if err != nil {
				return listSQL{}, err
			}
			return listSQL{From: "asset_logs", Where: "asset_group_id = ?", Args: []any{g.ID}, OrderBy: "logged_at DESC, id DESC"}, a.Require(0)
		},
		Rows: byIDs((*db.Queries).AssetLogListByIDs, each(toAssetLog))})
}

func assetLogAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.AssetLog, Access, error) {
	l, err := q.AssetLogGet(ctx, id)
	if db.IsNotFound(err) {
		return l, Access{}, notFound("The asset log does not exist.")
	}
	if err != nil {
		return l, Access{}, err
	}
	g, err := q.AssetGroupGet(ctx, l.AssetGroupID)
	if err != nil {
		return l, Access{}, err
	}
	var fleet int64
	if g.FleetID != nil {
		fleet = *g.FleetID
	}
	a, err := authorize(ctx, q, userID, l.OrganisationID, Scopes{Fleet: fleet})
	if db.IsNotFound(err) {
		return l, Access{}, notFound("The asset log does not exist.")
	}
	return l, a, err
}

func (s *Server) assetLogGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out assetLogJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := assetLogAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out = toAssetLog(l)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// assetLogPatch: the author, or MANAGE_FLEETS for another member's log.
func (s *Server) assetLogPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetLogBody
	ro, err := rq.decodePatch(&b, assetLogReadOnly...)
	if err != nil {
		return err
	}
	var out assetLogJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := assetLogAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.RequireSelfOr(l.CreatedBy, ManageFleets); err != nil {
			return err
		}
		if err := ro.check(toAssetLog(l)); err != nil {
			return err
		}
		if err := b.apply(&l); err != nil {
			return err
		}
		l, err = q.AssetLogUpdate(rq.ctx, db.AssetLogUpdateParams{ID: l.ID, OrganisationID: l.OrganisationID, Log: l.Log, LogHash: l.LogHash,
			Embed: l.Embed, Duration: l.Duration, Latitude: l.Latitude, Longitude: l.Longitude, LoggedAt: l.LoggedAt,
			UpdatedAt: s.nowText(), UpdatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		out = toAssetLog(l)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) assetLogDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := assetLogAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.RequireSelfOr(l.CreatedBy, ManageFleets); err != nil {
			return err
		}
		if l.AttachmentHash != nil {
			if err := releaseBlob(rq.ctx, q, l.OrganisationID, *l.AttachmentHash); err != nil {
				return err
			}
		}
		return q.AssetLogDelete(rq.ctx, db.AssetLogDeleteParams{ID: l.ID, OrganisationID: l.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// assetLogAttachmentPut stores the multipart part "file" as the log's one
// attachment (a content-addressed blob counted in storage_usage), replacing
// any earlier one. The author or MANAGE_FLEETS.
func (s *Server) assetLogAttachmentPut(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	mr, err := rq.r.MultipartReader()
	if err != nil {
		return badRequest("The body must be multipart/form-data with a file part named file.")
	}
	var data []byte
	var name string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return multipartError(err)
		}
		if part.FormName() != "file" {
			continue
		}
		if data, err = io.ReadAll(io.LimitReader(part, maxLogAttachment+1)); err != nil {
			return multipartError(err)
		}
		if len(data) > maxLogAttachment {
			return fieldError("file", "is larger than 20 MiB")
		}
		name = cleanFileName(part.FileName())
		break
	}
	if data == nil {
		return fieldError("file", "is required")
	}
	if name == "" {
		name = "attachment"
	}
	contentType := http.DetectContentType(data)
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	var out assetLogJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := assetLogAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.RequireSelfOr(l.CreatedBy, ManageFleets); err != nil {
			return err
		}
		now := s.nowText()
		if err := q.BlobPut(rq.ctx, db.BlobPutParams{Hash: hash, ContentType: contentType, Size: int64(len(data)), Data: data, CreatedAt: now}); err != nil {
			return err
		}
		if err := holdBlob(rq.ctx, q, l.OrganisationID, hash); err != nil {
			return err
		}
		if l.AttachmentHash != nil {
			if err := releaseBlob(rq.ctx, q, l.OrganisationID, *l.AttachmentHash); err != nil {
				return err
			}
		}
		attID := s.store.IDs.Next()
		l, err = q.AssetLogAttach(rq.ctx, db.AssetLogAttachParams{ID: l.ID, OrganisationID: l.OrganisationID, AttachmentID: &attID,
			AttachmentHash: &hash, AttachmentName: &name, UpdatedAt: now, UpdatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		out = toAssetLog(l)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// assetLogAttachmentGet streams the attachment under its file name.
func (s *Server) assetLogAttachmentGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var blob db.Blob
	var name string
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := assetLogAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		if l.AttachmentHash == nil || l.AttachmentName == nil {
			return notFound("The asset log has no attachment.")
		}
		name = *l.AttachmentName
		blob, err = q.BlobGet(rq.ctx, *l.AttachmentHash)
		return err
	})
	if err != nil {
		return err
	}
	h := rq.w.Header()
	h.Set("Content-Type", blob.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(blob.Data)))
	h.Set("Content-Disposition", contentDisposition(name))
	rq.w.WriteHeader(http.StatusOK)
	_, _ = rq.w.Write(blob.Data)
	return nil
}

// ---- Asset subscriptions

type assetSubscriptionJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	Capacity       int64  `json:"capacity"`
	Allocated      int64  `json:"allocated"`
}

func toAssetSubscription(a db.AssetSubscription) assetSubscriptionJSON {
	return assetSubscriptionJSON{ID: db.ID(a.ID), OrganisationID: db.ID(a.OrganisationID), Name: a.Name, Capacity: a.Capacity, Allocated: a.Allocated}
}

type assetSubscriptionBody struct {
	Name     *string `json:"name"`
	Capacity *int64  `json:"capacity"`
}

func (b *assetSubscriptionBody) validate(create bool) error {
	p := problems{}
	if create && b.Name == nil {
		p.add("name", "is required")
	}
	if create && b.Capacity == nil {
		p.add("capacity", "is required")
	}
	checkAssetName(p, "name", b.Name)
	if b.Capacity != nil && *b.Capacity < 0 {
		p.add("capacity", "must not be negative")
	}
	return p.err()
}

func (s *Server) assetSubscriptionCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetSubscriptionBody
	if err := rq.decodeCreate(&b, "id", "organisation_id", "allocated"); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	var out assetSubscriptionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		sub, err := q.AssetSubscriptionCreate(rq.ctx, db.AssetSubscriptionCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			Name: *b.Name, Capacity: *b.Capacity, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		out = toAssetSubscription(sub)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) assetSubscriptionList(rq *request) error {
	return listPage(s, rq, listSpec[assetSubscriptionJSON]{Path: "id", Fields: db.FilterFields{"name": nameFilter},
		Scope: orgScope(rq, ManageFleets, "asset_subscriptions", ""),
		Rows:  byIDs((*db.Queries).AssetSubscriptionListByIDs, each(toAssetSubscription))})
}

func (s *Server) assetSubscriptionGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	sub, a, err := catalogueRow(rq.ctx, s.store.R, rq.user.ID, id, "asset subscription", s.store.R.AssetSubscriptionGet, func(r db.AssetSubscription) int64 { return r.OrganisationID })
	if err != nil {
		return err
	}
	if err := a.Require(ManageFleets); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toAssetSubscription(sub))
}

// assetSubscriptionPatch: capacity may not drop below what is allocated.
func (s *Server) assetSubscriptionPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetSubscriptionBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id", "allocated")
	if err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	var out assetSubscriptionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sub, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset subscription", q.AssetSubscriptionGet, func(r db.AssetSubscription) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if err := ro.check(toAssetSubscription(sub)); err != nil {
			return err
		}
		capacity := sub.Capacity
		if b.Capacity != nil {
			if *b.Capacity < sub.Allocated {
				return fieldError("capacity", "must not be below the "+strconv.FormatInt(sub.Allocated, 10)+" assets allocated")
			}
			capacity = *b.Capacity
		}
		sub, err = q.AssetSubscriptionUpdate(rq.ctx, db.AssetSubscriptionUpdateParams{ID: sub.ID, OrganisationID: sub.OrganisationID,
			Name: orDefault(b.Name, sub.Name), Capacity: capacity})
		if err != nil {
			return err
		}
		out = toAssetSubscription(sub)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
