package server

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
)

type route struct {
	method  string
	path    string
	access  access
	handler handlerFunc
}

// routes is the whole API in one table.
func (s *Server) routes() []route {
	return []route{
		{"GET", "/healthz", public, s.healthz},

		// Sign-in: the server is its own OpenID provider.
		{"POST", "/auth/register", public, s.register},
		{"POST", "/oauth/token", public, s.token},
		{"GET", "/.well-known/openid-configuration", public, s.discovery},
		{"GET", "/.well-known/jwks.json", public, s.jwks},
		{"GET", "/oauth/userinfo", authenticated, s.userinfo},
		{"GET", "/admin/outbox", authenticated, s.outboxList},

		// Users
		{"GET", "/users/@me", authenticated, s.userMe},

		// Organisations, members, bans, domains
		{"POST", "/organisations", authenticated, s.organisationCreate},

		// Roles and permission grants

		// Invites

		// Projects, milestones, packages
		{"POST", "/organisations/:id/projects", authenticated, s.projectCreate},
		{"GET", "/organisations/:id/projects", authenticated, s.projectList},
		{"GET", "/projects/:id", authenticated, s.projectGet},
		{"PATCH", "/projects/:id", authenticated, s.projectPatch},
		{"PATCH", "/projects/:id/permissions/:roleId", authenticated, s.projectGrantPatch},
		{"GET", "/projects/:id/permissions", authenticated, s.projectGrantList},
		{"POST", "/projects/:id/milestones", authenticated, s.milestoneCreate},
		{"GET", "/projects/:id/milestones", authenticated, s.milestoneList},
		{"GET", "/milestones/:id", authenticated, s.milestoneGet},
		{"PATCH", "/milestones/:id", authenticated, s.milestonePatch},
		{"POST", "/projects/:id/packages", authenticated, s.packageCreate},
		{"GET", "/projects/:id/packages", authenticated, s.packageList},
		{"GET", "/packages/:id", authenticated, s.packageGet},
		{"PATCH", "/packages/:id", authenticated, s.packagePatch},
		{"PATCH", "/packages/:id/permissions/:roleId", authenticated, s.packageGrantPatch},
		{"GET", "/packages/:id/permissions", authenticated, s.packageGrantList},
	}
}

// userByIDPath is where GET /users/{id} is routed: httprouter cannot hold a
// wildcard beside the static /users/@me, /users/lookup and /users/avatar.
const userByIDPath = "/internal/users-by-id/"

// rewriteUserPath sends single-segment /users/<id> requests to userByIDPath.
func rewriteUserPath(r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/users/")
	if !ok || rest == "" || strings.Contains(rest, "/") || rest == "@me" || rest == "lookup" {
		return
	}
	r.URL.Path = userByIDPath + rest
	r.URL.RawPath = ""
}

func (s *Server) buildRouter() *httprouter.Router {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false
	rt.RedirectFixedPath = false
	rt.HandleMethodNotAllowed = true
	for _, r := range s.routes() {
		rt.Handle(r.method, r.path, s.handle(r.access, r.handler))
	}
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, notFound("No such path."))
	})
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errorf(http.StatusMethodNotAllowed, "Method %s is not allowed here.", r.Method))
	})
	rt.PanicHandler = func(w http.ResponseWriter, r *http.Request, p any) {
		panic(p) // recovered, logged and answered in ServeHTTP
	}
	return rt
}

func (s *Server) healthz(rq *request) error {
	if err := s.store.Reader.PingContext(rq.ctx); err != nil {
		return err
	}
	return rq.json(http.StatusOK, map[string]string{"status": "ok"})
}
