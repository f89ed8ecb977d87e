package server

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strings"

	"workspace/db"
)

// Organisation identity and usage (issue 19): icon, banner and logo images,
// storage_usage kept current, features, is_verified from domains and
// is_protected set by Staff. Decisions in docs/organisations.md.

const (
	orgImageMinSide = 16
	// orgImagesPath is where GET /organisations/images/{hash} is routed:
	// httprouter cannot hold the static "images" beside /organisations/:id.
	orgImagesPath = "/internal/organisation-images/"
)

// orgImageKinds maps each image route to the query that sets its hash.
var orgImageKinds = map[string]func(q *db.Queries, ctx context.Context, orgID int64, hash *string) error{
	"icon": func(q *db.Queries, ctx context.Context, orgID int64, hash *string) error {
		return q.OrgIconSet(ctx, db.OrgIconSetParams{Hash: hash, ID: orgID})
	},
	"banner": func(q *db.Queries, ctx context.Context, orgID int64, hash *string) error {
		return q.OrgBannerSet(ctx, db.OrgBannerSetParams{Hash: hash, ID: orgID})
	},
	"logo": func(q *db.Queries, ctx context.Context, orgID int64, hash *string) error {
		return q.OrgLogoSet(ctx, db.OrgLogoSetParams{Hash: hash, ID: orgID})
	},
}

func currentImage(o db.Organisation, kind string) *string {
	switch kind {
	case "icon":
		return o.IconHash
	case "banner":
		return o.BannerHash
	}
	return o.LogoHash
}

// holdBlob records one more reference from the organisation to a stored
// blob; the first adds the blob's bytes to storage_usage. Every area that
// stores an organisation's file (images, induction PDFs, attachments) goes
// through holdBlob and releaseBlob, so the usage stays current.
func holdBlob(ctx context.Context, q *db.Queries, orgID int64, hash string) error {
	refs, err := q.OrgBlobAttach(ctx, db.OrgBlobAttachParams{OrganisationID: orgID, Hash: hash})
	if err != nil || refs != 1 {
		return err
	}
	size, err := q.BlobSize(ctx, hash)
	if err != nil {
		return err
	}
	return q.OrgStorageAdd(ctx, db.OrgStorageAddParams{Delta: size, ID: orgID})
}

// releaseBlob drops one reference; the last one takes the blob's bytes off
// storage_usage.
func releaseBlob(ctx context.Context, q *db.Queries, orgID int64, hash string) error {
	refs, err := q.OrgBlobDetach(ctx, db.OrgBlobDetachParams{OrganisationID: orgID, Hash: hash})
	if db.IsNotFound(err) {
		return nil
	}
	if err != nil || refs > 0 {
		return err
	}
	size, err := q.BlobSize(ctx, hash)
	if err != nil {
		return err
	}
	if err := q.OrgBlobForget(ctx, db.OrgBlobForgetParams{OrganisationID: orgID, Hash: hash}); err != nil {
		return err
	}
	return q.OrgStorageAdd(ctx, db.OrgStorageAddParams{Delta: -size, ID: orgID})
}

// readImagePart reads the image of a multipart body: the first file part,
// named "file" or after the image kind.
func readImagePart(r *http.Request, kind string) ([]byte, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return nil, errorf(http.StatusUnsupportedMediaType, "Send the image as multipart/form-data.")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badRequest("The multipart body is malformed.")
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, fieldError("file", "is required")
		}
		if err != nil {
			return nil, multipartError(err)
		}
		if name := part.FormName(); name != "file" && name != kind {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, avatarMaxBytes+1))
		if err != nil {
			return nil, multipartError(err)
		}
		if len(data) > avatarMaxBytes {
			return nil, fieldError("file", "must be at most 10 MiB")
		}
		if len(data) == 0 {
			return nil, fieldError("file", "must be a JPEG or PNG image")
		}
		return data, nil
	}
}

// orgImagePut stores an icon, banner or logo (MANAGE_ORGANISATION) and
// answers the organisation.
func (s *Server) orgImagePut(kind string) handlerFunc {
	return func(rq *request) error {
		orgID, err := rq.pathID("id")
		if err != nil {
			return err
		}
		data, err := readImagePart(rq.r, kind)
		if err != nil {
			return busy(rq, err)
		}
		img, err := checkImage(data, "file", orgImageMinSide, orgImageMinSide)
		if err != nil {
			return busy(rq, err)
		}
		return s.setOrgImage(rq, orgID, kind, &img)
	}
}

// orgImageDelete removes an icon, banner or logo; removing none is fine.
func (s *Server) orgImageDelete(kind string) handlerFunc {
	return func(rq *request) error {
		orgID, err := rq.pathID("id")
		if err != nil {
			return err
		}
		return s.setOrgImage(rq, orgID, kind, nil)
	}
}

func (s *Server) setOrgImage(rq *request, orgID int64, kind string, img *avatarFile) error {
	var out orgJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
		if err != nil {
			return err
		}
		var hash *string
		if img != nil {
			if err := q.BlobPut(rq.ctx, db.BlobPutParams{Hash: img.hash, ContentType: img.contentType, Size: int64(len(img.data)), Data: img.data, CreatedAt: s.nowText()}); err != nil {
				return err
			}
			if err := holdBlob(rq.ctx, q, orgID, img.hash); err != nil {
				return err
			}
			hash = &img.hash
		}
		if old := currentImage(a.Org, kind); old != nil {
			if err := releaseBlob(rq.ctx, q, orgID, *old); err != nil {
				return err
			}
		}
		if err := orgImageKinds[kind](q, rq.ctx, orgID, hash); err != nil {
			return err
		}
		out, err = loadOrg(rq.ctx, q, orgID)
		return err
	})
	if err != nil {
		return err
	}
	if img == nil {
		return rq.noContent()
	}
	return rq.json(http.StatusOK, out)
}

// orgImageGet serves an organisation's image without authentication: only
// hashes a live organisation shows as icon, banner or logo.
func (s *Server) orgImageGet(rq *request) error {
	return s.serveImage(rq, func(hash string) (db.Blob, error) { return s.store.R.OrgImageBlobGet(rq.ctx, hash) }, "No such image.")
}

// rewriteOrgImagePath sends /organisations/images/<hash> to orgImagesPath.
func rewriteOrgImagePath(r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/organisations/images/"); ok && rest != "" && !strings.Contains(rest, "/") {
		r.URL.Path = orgImagesPath + rest
		r.URL.RawPath = ""
	}
}

// orgFeatures is the context form's features: the quotas this server sets
// with what is used, and the capabilities switched on, so a client can show
// limits before a 429.
func (s *Server) orgFeatures(ctx context.Context, q *db.Queries, orgID, members int64) (map[string]any, error) {
	open, err := q.ProjectStatusCount(ctx, db.ProjectStatusCountParams{OrganisationID: orgID, Status: statusOpen})
	if err != nil {
		return nil, err
	}
	quota := func(limit int, used int64) map[string]any {
		q := map[string]any{"limit": nil, "used": used}
		if limit > 0 {
			q["limit"] = limit
		}
		return q
	}
	return map[string]any{
		"max_projects":     quota(s.cfg.MaxProjectsPerOrg, open),
		"max_members":      quota(s.cfg.MaxMembersPerOrg, members),
		"smtp":             s.mailer.smtp != nil,
		"sms":              false,
		"external_issuers": len(s.cfg.ExternalIssuers) > 0,
		"webhooks":         s.cfg.WebhookPoll > 0,
	}, nil
}

type adminOrgBody struct {
	IsProtected *bool `json:"is_protected"`
}

// adminOrganisationPatch lets Staff protect an organisation from deletion.
func (s *Server) adminOrganisationPatch(rq *request) error {
	// Staff only: the route checks (routes.go, staff).
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b adminOrgBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if b.IsProtected == nil {
		return fieldError("is_protected", "is required")
	}
	var out orgJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if err := q.OrgProtectedSet(rq.ctx, db.OrgProtectedSetParams{IsProtected: *b.IsProtected, ID: orgID}); err != nil {
			return err
		}
		out, err = loadOrg(rq.ctx, q, orgID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
