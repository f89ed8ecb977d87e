package server

// Until the fleets area is built no such object exists: after the row's own
// input checks, lookups by id are 404.

func (s *Server) userFleetSubscriptions(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such fleet.")
}
