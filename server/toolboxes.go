package server

// Until the toolboxes area is built no such object exists: after the row's own
// input checks, lookups by id are 404.

import (
	"strings"

	"workspace/db"
)

func (s *Server) userToolboxGet(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such toolbox.")
}

// signerBody is the signer's details on the toolbox and witness sign rows.
type signerBody struct {
	JWT         *string `json:"jwt"`
	ScheduleID  *db.ID  `json:"schedule_id"`
	FirstName   *string `json:"first_name"`
	LastName    *string `json:"last_name"`
	Company     *string `json:"company"`
	Position    *string `json:"position"`
	PhoneNumber *string `json:"phone_number"`
}

func (b signerBody) validate(jwtRequired bool) error {
	p := problems{}
	if (b.JWT == nil || strings.TrimSpace(*b.JWT) == "") && jwtRequired {
		p.add("jwt", "is required")
	}
	for name, v := range map[string]*string{"first_name": b.FirstName, "last_name": b.LastName} {
		if v != nil {
			p.length(name, *v, 0, 100)
		}
	}
	for name, v := range map[string]*string{"company": b.Company, "position": b.Position} {
		if v != nil {
			p.length(name, *v, 0, 200)
		}
	}
	if b.PhoneNumber != nil {
		if _, ok := normalisePhone(*b.PhoneNumber); !ok {
			p.add("phone_number", "must be a phone number of 5-15 digits, optionally starting with +")
		}
	}
	return p.err()
}

func (s *Server) userToolboxSign(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	var b signerBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := b.validate(b.ScheduleID == nil); err != nil {
		return err
	}
	return notFound("No such toolbox.")
}
