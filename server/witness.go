package server

// Until the witness signing area is built no such object exists: after the row's own
// input checks, lookups by id are 404.

import (
	"strings"
)

func (s *Server) userWitnessGet(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	if strings.TrimSpace(rq.r.URL.Query().Get("token")) == "" {
		return fieldError("token", "is required")
	}
	return notFound("No such document revision or work item.")
}

func (s *Server) userWitnessSign(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	var b signerBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	return notFound("No such document revision or work item.")
}
