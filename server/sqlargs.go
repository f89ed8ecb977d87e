package server

import (
	"strconv"
	"strings"
)

// SQL argument helpers shared by every area's queries.

// idsJSON renders ids as a JSON array for json_each(?) placeholders.
func idsJSON(ids []int64) string {
	b := make([]byte, 0, len(ids)*20+2)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// likeEscape escapes LIKE's wildcards so caller text matches literally.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
