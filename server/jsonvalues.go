package server

import "workspace/db"

// Small conversions between stored values and JSON fields, shared by every area.

// optID renders an optional stored id as an optional JSON id (null when unset).
func optID(id *int64) *db.ID {
	if id == nil {
		return nil
	}
	v := db.ID(*id)
	return &v
}

// orDefault is an optional body field's value, or def when the caller left it out.
func orDefault(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
