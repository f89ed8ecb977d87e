package server

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"workspace/web"
)

// The single-page app (issue 16, docs/web.md): web/dist embedded in the
// binary, served under /app/. Any other path under /app/ answers index.html
// (history routing); a missing file under /app/assets/ is a 404, so a stale
// script reference never receives HTML.

// appCSP allows only the app's own files: no inline script or style, no
// other origin, no framing.
const appCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

type appFiles struct {
	fsys  fs.FS
	index []byte
}

func newAppFiles(fsys fs.FS) (*appFiles, error) {
	index, err := fs.ReadFile(fsys, "index.html")
	if err != nil {
		return nil, err
	}
	return &appFiles{fsys: fsys, index: index}, nil
}

var defaultAppFiles = func() *appFiles {
	a, err := newAppFiles(web.Dist())
	if err != nil {
		panic("web/dist has no index.html: run npm ci && npm run build in web/: " + err.Error())
	}
	return a
}()

// appRoot sends a browser at / to the app.
func (s *Server) appRoot(rq *request) error {
	http.Redirect(rq.w, rq.r, "/app/", http.StatusFound)
	return nil
}

// appServe answers a file of the app, or index.html.
func (s *Server) appServe(rq *request) error {
	a := s.app
	h := rq.w.Header()
	h.Set("Content-Security-Policy", appCSP)
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	name := strings.TrimPrefix(path.Clean("/"+rq.params.ByName("path")), "/")
	if name != "" && name != "index.html" {
		if f, err := a.fsys.Open(name); err == nil {
			defer f.Close()
			if st, err := f.Stat(); err == nil && !st.IsDir() {
				if strings.HasPrefix(name, "assets/") {
					// Vite names these by content hash: a changed file has a new name.
					h.Set("Cache-Control", "public, max-age=31536000, immutable")
				} else {
					h.Set("Cache-Control", "no-cache")
				}
				http.ServeContent(rq.w, rq.r, name, time.Time{}, f.(io.ReadSeeker))
				return nil
			}
		}
		if name == "assets" || strings.HasPrefix(name, "assets/") {
			return notFound("No such file.")
		}
	}
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(rq.w, rq.r, "index.html", time.Time{}, bytes.NewReader(a.index))
	return nil
}

// appFavicon answers /favicon.ico, which browsers ask for on every page of
// the server (the sign-in page too), with the app's SVG icon: browsers take
// an SVG icon by its Content-Type whatever the name.
func (s *Server) appFavicon(rq *request) error {
	b, err := fs.ReadFile(s.app.fsys, "favicon.svg")
	if err != nil {
		return notFound("No such file.")
	}
	h := rq.w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("Content-Security-Policy", "default-src 'none'")
	_, err = rq.w.Write(b)
	return err
}
