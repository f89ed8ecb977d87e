package server

import (
	"context"
	"net/http"
	"strings"

	"workspace/db"
)

// Locations and sub locations (spec: Locations). Decisions in
// docs/structure.md.

const (
	maxLocationName        = 200
	maxAddress             = 500
	defaultLocationName    = "new location"
	defaultSubLocationName = "new sub location"
	defaultColour          = "#000000"
)

type subLocationJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	LocationID     db.ID  `json:"location_id"`
	Code           string `json:"code"`
	Name           string `json:"name"`
	AssetCapacity  *int64 `json:"asset_capacity"`
	Enabled        bool   `json:"enabled"`
}

func toSubLocation(s db.SubLocation) subLocationJSON {
	return subLocationJSON{ID: db.ID(s.ID), OrganisationID: db.ID(s.OrganisationID), LocationID: db.ID(s.LocationID),
		Code: s.Code, Name: s.Name, AssetCapacity: s.AssetCapacity, Enabled: s.Enabled}
}

// locationJSON returns the colour under both spellings (the spec's color is
// an alias of colour).
type locationJSON struct {
	ID             db.ID             `json:"id"`
	OrganisationID db.ID             `json:"organisation_id"`
	Code           string            `json:"code"`
	Name           string            `json:"name"`
	Colour         string            `json:"colour"`
	Color          string            `json:"color"`
	Latitude       *float64          `json:"latitude"`
	Longitude      *float64          `json:"longitude"`
	Radius         *float64          `json:"radius"`
	Address        string            `json:"address"`
	Delivery       bool              `json:"delivery"`
	TimezoneCode   *string           `json:"timezone_code"`
	SubLocations   []subLocationJSON `json:"sub_locations"`
}

func toLocation(l db.Location, subs []db.SubLocation) locationJSON {
	out := locationJSON{
		ID: db.ID(l.ID), OrganisationID: db.ID(l.OrganisationID), Code: l.Code, Name: l.Name, Colour: l.Colour, Color: l.Colour,
		Latitude: l.Latitude, Longitude: l.Longitude, Radius: l.Radius, Address: l.Address, Delivery: l.Delivery,
		TimezoneCode: l.TimezoneCode, SubLocations: []subLocationJSON{},
	}
	for _, s := range subs {
		out.SubLocations = append(out.SubLocations, toSubLocation(s))
	}
	return out
}

var locationReadOnly = []string{"id", "organisation_id", "sub_locations"}

type locationBody struct {
	Code         *string      `json:"code"`
	Name         *string      `json:"name"`
	Colour       *string      `json:"colour"`
	Color        *string      `json:"color"`
	Latitude     Opt[float64] `json:"latitude"`
	Longitude    Opt[float64] `json:"longitude"`
	Radius       Opt[float64] `json:"radius"`
	Address      *string      `json:"address"`
	TimezoneCode Opt[string]  `json:"timezone_code"`
	Delivery     *bool        `json:"delivery"`
}

// apply validates the body and writes it over l (a new location's defaults
// or the current row). Latitude and longitude end both set or both null.
func (b *locationBody) apply(l *db.Location) error {
	p := problems{}
	if b.Code != nil {
		l.Code = strings.TrimSpace(*b.Code)
		p.length("code", l.Code, 0, maxCode)
	}
	if b.Name != nil {
		l.Name = strings.TrimSpace(*b.Name)
		p.length("name", l.Name, 1, maxLocationName)
	}
	colour, field := b.Colour, "colour"
	if colour == nil {
		colour, field = b.Color, "color"
	}
	switch {
	case colour != nil && !colourRE.MatchString(*colour):
		p.add(field, "must be a colour as #RRGGBB")
	case b.Colour != nil && b.Color != nil && !strings.EqualFold(*b.Colour, *b.Color):
		p.add("color", "must equal colour when both are given")
	case colour != nil:
		l.Colour = strings.ToUpper(*colour)
	}
	setFloat := func(field string, o Opt[float64], dst **float64, lo, hi float64) {
		if !o.Set {
			return
		}
		if o.Null {
			*dst = nil
			return
		}
		if o.Value < lo || o.Value > hi {
			p.add(field, "is out of range")
			return
		}
		v := o.Value
		*dst = &v
	}
	setFloat("latitude", b.Latitude, &l.Latitude, -90, 90)
	setFloat("longitude", b.Longitude, &l.Longitude, -180, 180)
	setFloat("radius", b.Radius, &l.Radius, 0, 1e7)
	if (l.Latitude == nil) != (l.Longitude == nil) {
		p.add("latitude", "and longitude must be given together (or both null)")
	}
	if b.Address != nil {
		l.Address = *b.Address
		p.length("address", l.Address, 0, maxAddress)
	}
	if b.TimezoneCode.Set {
		if b.TimezoneCode.Null || b.TimezoneCode.Value == "" {
			l.TimezoneCode = nil
		} else if !validTimezone(b.TimezoneCode.Value) {
			p.add("timezone_code", "must be an IANA time zone such as Europe/London")
		} else {
			tz := b.TimezoneCode.Value
			l.TimezoneCode = &tz
		}
	}
	if b.Delivery != nil {
		l.Delivery = *b.Delivery
	}
	return p.err()
}

// locationAccess loads a location and the caller's access; absent is the
// row's status for a missing location.
func locationAccess(ctx context.Context, q *db.Queries, userID, id int64, absent int) (db.Location, Access, error) {
	l, err := q.LocationGet(ctx, id)
	if db.IsNotFound(err) {
		return l, Access{}, errorf(absent, "The location does not exist.")
	}
	if err != nil {
		return l, Access{}, err
	}
	a, err := authorize(ctx, q, userID, l.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return l, Access{}, errorf(absent, "The location does not exist.")
	}
	return l, a, err
}

func (s *Server) locationCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b locationBody
	if err := rq.decodeCreate(&b, locationReadOnly...); err != nil {
		return err
	}
	l := db.Location{Name: defaultLocationName, Colour: defaultColour}
	if err := b.apply(&l); err != nil {
		return err
	}
	var out locationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageLocations); err != nil {
			return err
		}
		created, err := q.LocationCreate(rq.ctx, db.LocationCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Code: l.Code, Name: l.Name, Colour: l.Colour,
			Latitude: l.Latitude, Longitude: l.Longitude, Radius: l.Radius, Address: l.Address, Delivery: l.Delivery,
			TimezoneCode: l.TimezoneCode, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toLocation(created, nil)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// locationList: every location with its sub locations; delivery=true|false
// keeps only those with that flag.
func (s *Server) locationList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	filter := int64(-1)
	if _, ok := rq.r.URL.Query()["delivery"]; ok {
		d, err := rq.queryBool("delivery", false)
		if err != nil {
			return err
		}
		filter = 0
		if d {
			filter = 1
		}
	}
	out := []locationJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		// Members, and holders of an accepted share of one of the
		// organisation's fleets (spec: fleet-shared reads).
		a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, undecided)
		if err != nil {
			return err
		}
		if err := requireMemberOrShare(rq.ctx, q, a); err != nil {
			return err
		}
		rows, err := q.LocationList(rq.ctx, db.LocationListParams{OrganisationID: orgID, DeliveryFilter: filter})
		if err != nil {
			return err
		}
		subs, err := q.SubLocationListForOrganisation(rq.ctx, orgID)
		if err != nil {
			return err
		}
		byLocation := map[int64][]db.SubLocation{}
		for _, sl := range subs {
			byLocation[sl.LocationID] = append(byLocation[sl.LocationID], sl)
		}
		for _, l := range rows {
			out = append(out, toLocation(l, byLocation[l.ID]))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) locationGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out locationJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := locationAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		subs, err := q.SubLocationList(rq.ctx, l.ID)
		if err != nil {
			return err
		}
		out = toLocation(l, subs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) locationPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b locationBody
	ro, err := rq.decodePatch(&b, locationReadOnly...)
	if err != nil {
		return err
	}
	var out locationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := locationAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageLocations); err != nil {
			return err
		}
		subs, err := q.SubLocationList(rq.ctx, l.ID)
		if err != nil {
			return err
		}
		if err := ro.check(toLocation(l, subs)); err != nil {
			return err
		}
		if err := b.apply(&l); err != nil {
			return err
		}
		l, err = q.LocationUpdate(rq.ctx, db.LocationUpdateParams{
			ID: l.ID, OrganisationID: l.OrganisationID, Code: l.Code, Name: l.Name, Colour: l.Colour,
			Latitude: l.Latitude, Longitude: l.Longitude, Radius: l.Radius, Address: l.Address, Delivery: l.Delivery,
			TimezoneCode: l.TimezoneCode,
		})
		if err != nil {
			return err
		}
		out = toLocation(l, subs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type subLocationBody struct {
	Code          *string    `json:"code"`
	Name          *string    `json:"name"`
	AssetCapacity Opt[int64] `json:"asset_capacity"`
}

func (s *Server) subLocationCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b subLocationBody
	if err := rq.decodeCreate(&b, "id", "organisation_id", "location_id"); err != nil {
		return err
	}
	p := problems{}
	optText(p, "code", b.Code, maxCode)
	checkName(p, "name", b.Name, maxLocationName)
	var capacity *int64
	if b.AssetCapacity.Set && !b.AssetCapacity.Null {
		if b.AssetCapacity.Value < 0 {
			p.add("asset_capacity", "must not be negative")
		}
		capacity = &b.AssetCapacity.Value
	}
	if err := p.err(); err != nil {
		return err
	}
	var out subLocationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := locationAccess(rq.ctx, q, rq.user.ID, id, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := a.Require(ManageLocations); err != nil {
			return err
		}
		sl, err := q.SubLocationCreate(rq.ctx, db.SubLocationCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: l.OrganisationID, LocationID: l.ID, Code: orDefault(b.Code, ""),
			Name: orDefault(b.Name, defaultSubLocationName), AssetCapacity: capacity, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toSubLocation(sl)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// subLocationAccess loads a sub-location and the caller's access to its
// organisation; absent is the status for one that does not exist or that
// the caller cannot see.
func subLocationAccess(ctx context.Context, q *db.Queries, userID, id int64, absent int) (db.SubLocation, Access, error) {
	sl, err := q.SubLocationGet(ctx, id)
	if db.IsNotFound(err) {
		return sl, Access{}, errorf(absent, "The sub-location does not exist.")
	}
	if err != nil {
		return sl, Access{}, err
	}
	a, err := authorize(ctx, q, userID, sl.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return sl, Access{}, errorf(absent, "The sub-location does not exist.")
	}
	return sl, a, err
}

// subLocationPatch corrects a sub-location's code, name or asset
// capacity. The spec's table has no such row, but without it a
// sub-location typed wrong could never be put right, and the Sync screen
// changes with it a code two offices gave while apart (docs/structure.md).
func (s *Server) subLocationPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b subLocationBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id", "location_id")
	if err != nil {
		return err
	}
	p := problems{}
	optText(p, "code", b.Code, maxCode)
	checkName(p, "name", b.Name, maxLocationName)
	if b.AssetCapacity.Set && !b.AssetCapacity.Null && b.AssetCapacity.Value < 0 {
		p.add("asset_capacity", "must not be negative")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out subLocationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sl, a, err := subLocationAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageLocations); err != nil {
			return err
		}
		if err := ro.check(toSubLocation(sl)); err != nil {
			return err
		}
		if b.Code != nil {
			sl.Code = *b.Code // as created: a code is kept as typed
		}
		if b.Name != nil {
			sl.Name = *b.Name // trimmed by checkName
		}
		if b.AssetCapacity.Set {
			sl.AssetCapacity = nil
			if !b.AssetCapacity.Null {
				sl.AssetCapacity = &b.AssetCapacity.Value
			}
		}
		sl, err = q.SubLocationUpdate(rq.ctx, db.SubLocationUpdateParams{ID: sl.ID, Code: sl.Code, Name: sl.Name, AssetCapacity: sl.AssetCapacity})
		if err != nil {
			return err
		}
		out = toSubLocation(sl)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) subLocationList(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []subLocationJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := locationAccess(rq.ctx, q, rq.user.ID, id, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := requireMemberOrShare(rq.ctx, q, a); err != nil {
			return err
		}
		rows, err := q.SubLocationList(rq.ctx, l.ID)
		if err != nil {
			return err
		}
		for _, sl := range rows {
			out = append(out, toSubLocation(sl))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// Inductions a location requires (beyond the spec; docs/toolboxes.md): a
// user signing a toolbox held at the location needs a valid record of each.

// locationInductionPlace loads the path's location and induction for a
// change (MANAGE_LOCATIONS; the induction of the same organisation, 400).
func locationInductionPlace(rq *request, q *db.Queries) (db.Location, db.Induction, error) {
	id, err := rq.pathID("id")
	if err != nil {
		return db.Location{}, db.Induction{}, err
	}
	inductionID, err := rq.pathID("induction")
	if err != nil {
		return db.Location{}, db.Induction{}, err
	}
	l, a, err := locationAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
	if err != nil {
		return l, db.Induction{}, err
	}
	if err := a.Require(ManageLocations); err != nil {
		return l, db.Induction{}, err
	}
	i, err := q.InductionGet(rq.ctx, inductionID)
	if db.IsNotFound(err) || (err == nil && i.OrganisationID != l.OrganisationID) {
		return l, i, fieldError("induction", "must name an induction of the organisation")
	}
	return l, i, err
}

func (s *Server) locationInductionPut(rq *request) error {
	var out []inductionJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, i, err := locationInductionPlace(rq, q)
		if err != nil {
			return err
		}
		if err := q.LocationInductionPut(rq.ctx, db.LocationInductionPutParams{LocationID: l.ID, InductionID: i.ID,
			OrganisationID: l.OrganisationID, CreatedAt: s.nowText()}); err != nil {
			return err
		}
		out, err = locationInductions(rq.ctx, q, l.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) locationInductionDelete(rq *request) error {
	var out []inductionJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		l, i, err := locationInductionPlace(rq, q)
		if err != nil {
			return err
		}
		n, err := q.LocationInductionDelete(rq.ctx, db.LocationInductionDeleteParams{LocationID: l.ID, InductionID: i.ID})
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("The location does not require this induction.")
		}
		out, err = locationInductions(rq.ctx, q, l.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// locationInductionList: the inductions the location requires (members).
func (s *Server) locationInductionList(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []inductionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		l, a, err := locationAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out, err = locationInductions(rq.ctx, q, l.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func locationInductions(ctx context.Context, q *db.Queries, locationID int64) ([]inductionJSON, error) {
	ids, err := q.LocationInductionIDs(ctx, locationID)
	if err != nil {
		return nil, err
	}
	return inductionsJSON(ctx, q, ids)
}
