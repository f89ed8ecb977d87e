// Package web holds the built single-page app (web/dist), embedded so the
// binary serves it without Node.js. Sources are in web/src; `npm ci && npm
// run build` in this directory rebuilds dist, which is committed (docs/web.md).
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built app: index.html at its root, hashed files in assets/.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded at build time; its absence fails the build
	}
	return sub
}
