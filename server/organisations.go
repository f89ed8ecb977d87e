package server

import (
	"net/http"
	"strings"

	"workspace/db"
)

// everyoneRank ranks the @everyone role below every other role.
const everyoneRank = 1<<31 - 1

type idJSON struct {
	ID db.ID `json:"id"`
}

// orgJSON is the organisation object.
type orgJSON struct {
	ID                  db.ID   `json:"id"`
	Name                string  `json:"name"`
	Description         string  `json:"description"`
	Location            string  `json:"location"`
	Code                string  `json:"code"`
	DefaultBranchName   string  `json:"default_branch_name"`
	MemberCount         int64   `json:"member_count"`
	IconHash            *string `json:"icon_hash"`
	BannerHash          *string `json:"banner_hash"`
	LogoHash            *string `json:"logo_hash"`
	StorageUsage        int64   `json:"storage_usage"`
	CreatedAt           string  `json:"created_at"`
	OwnedBy             idJSON  `json:"owned_by"`
	IsProtected         bool    `json:"is_protected"`
	IsVerified          bool    `json:"is_verified"`
	MemberApproval      bool    `json:"member_approval"`
	RestrictEmailDomain bool    `json:"restrict_email_domain"`
	IsDeleted           bool    `json:"is_deleted"`
	DeletedAt           *string `json:"deleted_at"`
	DeletedBy           *idJSON `json:"deleted_by"`
}

// orgPartialJSON is the organisation's partial form.
type orgPartialJSON struct {
	ID          db.ID   `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	IconHash    *string `json:"icon_hash"`
}

func toOrg(o db.Organisation, memberCount int64) orgJSON {
	out := orgJSON{
		ID: db.ID(o.ID), Name: o.Name, Description: o.Description, Location: o.Location, Code: o.Code,
		DefaultBranchName: o.DefaultBranchName, MemberCount: memberCount, IconHash: o.IconHash,
		BannerHash: o.BannerHash, LogoHash: o.LogoHash, StorageUsage: o.StorageUsage, CreatedAt: o.CreatedAt,
		OwnedBy: idJSON{db.ID(o.OwnedBy)}, IsProtected: o.IsProtected, IsVerified: o.IsVerified,
		MemberApproval: o.MemberApproval, RestrictEmailDomain: o.RestrictEmailDomain,
		IsDeleted: o.DeletedAt != nil, DeletedAt: o.DeletedAt,
	}
	if o.DeletedBy != nil {
		out.DeletedBy = &idJSON{db.ID(*o.DeletedBy)}
	}
	return out
}

func toOrgPartial(o db.Organisation) orgPartialJSON {
	return orgPartialJSON{ID: db.ID(o.ID), Name: o.Name, Description: o.Description, IconHash: o.IconHash}
}

type orgCreateBody struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Location    string `json:"location"`
	Code        string `json:"code"`
}

// organisationCreate makes the caller owner and first member, with the
// @everyone role (id = organisation id) allowed its default permissions.
func (s *Server) organisationCreate(rq *request) error {
	var b orgCreateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	b.Name = strings.TrimSpace(b.Name)
	p := problems{}
	p.length("name", b.Name, 2, 100)
	p.length("code", b.Code, 0, 12)
	p.length("description", b.Description, 0, 4000)
	p.length("location", b.Location, 0, 200)
	if err := p.err(); err != nil {
		return err
	}
	var org db.Organisation
	now := s.nowText()
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		var err error
		org, err = q.OrganisationCreate(rq.ctx, db.OrganisationCreateParams{
			ID: s.store.IDs.Next(), Name: b.Name, Description: b.Description, Location: b.Location,
			Code: b.Code, OwnedBy: rq.user.ID, CreatedAt: now,
		})
		if err != nil {
			return err
		}
		if err := q.MemberCreate(rq.ctx, db.MemberCreateParams{OrganisationID: org.ID, UserID: rq.user.ID, JoinedAt: now}); err != nil {
			return err
		}
		if _, err := q.RoleCreate(rq.ctx, db.RoleCreateParams{
			ID: org.ID, OrganisationID: org.ID, Name: "@everyone", SortOrder: everyoneRank, CreatedAt: now,
		}); err != nil {
			return err
		}
		return q.GrantPut(rq.ctx, db.GrantPutParams{
			OrganisationID: org.ID, ScopeType: "organisation", ScopeID: org.ID,
			TargetType: "organisation", TargetID: org.ID, AllowMask: int64(DefaultEveryone),
		})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, toOrg(org, 1))
}

// roleJSON is the role object; permissions maps permission names to
// "allow" or "deny" (explicit grants only).
type roleJSON struct {
	ID             db.ID             `json:"id"`
	OrganisationID db.ID             `json:"organisation_id"`
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	Order          int64             `json:"order"`
	Permissions    map[string]string `json:"permissions"`
}
