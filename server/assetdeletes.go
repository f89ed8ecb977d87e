package server

import (
	"workspace/db"
)

// Deleting asset statuses, asset types, asset zones, asset fields and
// temporary or permanent asset groups. The spec's Assets table shows no DELETE for them; the web app
// needs them (docs/web.md: what the UI needs is added to the API), so they
// are added here with the rules of docs/assets.md, "Deleting".

// assetZoneDelete: MANAGE_FLEETS; the zone comes off every type it is
// attached to (a zone holds nothing else).
func (s *Server) assetZoneDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		z, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset zone", q.AssetZoneGet, func(r db.AssetZone) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if err := q.AssetZoneDetachAll(rq.ctx, z.ID); err != nil {
			return err
		}
		return q.AssetZoneDelete(rq.ctx, db.AssetZoneDeleteParams{ID: z.ID, OrganisationID: z.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// assetFieldDelete: MANAGE_FLEETS; refused (400) while an asset or group
// holds a value of the field, as a type change and an enum value removal
// are, so deleting never drops data silently. The field comes off every
// type and its enum values go with it.
func (s *Server) assetFieldDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset field", q.AssetFieldGet, func(r db.AssetField) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		used, err := fieldInUse(rq.ctx, q, f.ID)
		if err != nil {
			return err
		}
		if used {
			return badRequest("Assets hold values of the field %q: clear them before deleting it.", f.Name)
		}
		if err := q.AssetFieldDetachAll(rq.ctx, f.ID); err != nil {
			return err
		}
		if err := q.AssetFieldEnumValuesDeleteAll(rq.ctx, f.ID); err != nil {
			return err
		}
		return q.AssetFieldDelete(rq.ctx, db.AssetFieldDeleteParams{ID: f.ID, OrganisationID: f.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// assetGroupDelete deletes a temporary or permanent group (an asset's
// single group is its asset: 400): MANAGE_FLEETS in the organisation or on
// the group's fleet. Refused (400) while work items or documents name the
// group; its assets leave it (they stay), its field values and its log
// entries go with it, their attachments released from the organisation's
// storage.
func (s *Server) assetGroupDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, false)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if g.Ephemerality == ephemeralSingle {
			return badRequest("A single group is its asset; assets are not deleted, set active to false instead.")
		}
		if g.OpenWorkItemCount+g.ClosedWorkItemCount > 0 {
			return badRequest("Work items name this group: move or delete them first.")
		}
		named, err := q.AssetGroupNamedByDocument(rq.ctx, &g.ID)
		if err != nil {
			return err
		}
		if named {
			return badRequest("Documents name this group: change them first.")
		}
		hashes, err := q.AssetLogAttachmentsOfGroup(rq.ctx, g.ID)
		if err != nil {
			return err
		}
		for _, h := range hashes {
			if h != nil {
				if err := releaseBlob(rq.ctx, q, g.OrganisationID, *h); err != nil {
					return err
				}
			}
		}
		for _, del := range []func() error{
			func() error { return q.AssetLogsDeleteOfGroup(rq.ctx, g.ID) },
			func() error { return q.AssetGroupMembersDeleteAll(rq.ctx, g.ID) },
			func() error { return q.AssetFieldValuesDeleteOfGroup(rq.ctx, g.ID) },
			func() error {
				return q.AssetGroupDelete(rq.ctx, db.AssetGroupDeleteParams{ID: g.ID, OrganisationID: g.OrganisationID})
			},
		} {
			if err := del(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// assetStatusDelete: MANAGE_FLEETS (as creating one; editing needs only
// membership, the spec's row). Refused (400, like a field with values and
// a fleet that is not empty) while an asset or group has the status, so a
// delete never changes assets silently.
func (s *Server) assetStatusDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		st, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset status", q.AssetStatusGet, func(r db.AssetStatus) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		used, err := q.AssetStatusInUse(rq.ctx, &st.ID)
		if err != nil {
			return err
		}
		if used {
			return badRequest("Assets or groups have the status %q: give them another status first.", st.Name)
		}
		return q.AssetStatusDelete(rq.ctx, db.AssetStatusDeleteParams{ID: st.ID, OrganisationID: st.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// assetTypeDelete: MANAGE_FLEETS. Refused (400) while an asset or group is
// of the type (a type is required and fixes what its assets carry); its
// field and zone attachments go with it, the fields and zones stay.
func (s *Server) assetTypeDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := assetTypeAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		used, err := q.AssetTypeInUse(rq.ctx, t.ID)
		if err != nil {
			return err
		}
		if used {
			what := "Assets"
			if t.Ephemerality != ephemeralSingle {
				what = "Groups"
			}
			return badRequest("%s are of the type %q: change their type or delete them first.", what, t.Name)
		}
		if err := q.AssetTypeFieldsDetachAll(rq.ctx, t.ID); err != nil {
			return err
		}
		if err := q.AssetTypeZonesDetachAll(rq.ctx, t.ID); err != nil {
			return err
		}
		return q.AssetTypeDelete(rq.ctx, db.AssetTypeDeleteParams{ID: t.ID, OrganisationID: t.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}
