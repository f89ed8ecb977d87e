package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchOrg seeds an organisation where @everyone may not view projects and
// members see them through a role grant, as the load benchmark does.
func benchOrg(b *testing.B, nProjects int) (e *testEnv, orgID string, member *testUser, projects []string) {
	b.Helper()
	e = newEnv(b)
	owner := e.user("owner")
	orgID = e.org(owner, "Bench")
	e.must(http.StatusOK, owner, "PUT", "/organisations/"+orgID+"/permissions/"+orgID,
		map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "deny"}})
	member = e.user("member")
	e.addMember(orgID, member)
	role := e.rawRole(orgID, "crew", 0, member)
	e.must(http.StatusOK, owner, "PUT", "/organisations/"+orgID+"/permissions/"+role,
		map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow", "CREATE_PROJECTS": "allow"}})
	for i := 0; i < nProjects; i++ {
		r := e.must(http.StatusCreated, owner, "POST", "/organisations/"+orgID+"/projects",
			map[string]any{"name": fmt.Sprintf("Project %05d", i), "code": fmt.Sprintf("P%05d", i)})
		projects = append(projects, r.obj(b)["id"].(string))
	}
	return e, orgID, member, projects
}

// benchRequests runs one request per iteration from parallel goroutines
// through the whole handler (no network) and fails on an unexpected status.
func benchRequests(b *testing.B, e *testEnv, want int, mk func(i int64) *http.Request) {
	var n atomic.Int64
	b.ReportAllocs()
	// Many callers at once, as the load benchmark's 50 connections, so
	// writes share group commits as they do under load.
	b.SetParallelism(25)
	cpu := processCPU()
	b.ResetTimer()
	defer func() {
		// CPU time per request moves less than ns/op on a shared machine.
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	}()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, mk(n.Add(1)))
			if rec.Code != want {
				b.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body)
			}
		}
	})
}

// processCPU is the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkProjectGet(b *testing.B) {
	e, _, member, projects := benchOrg(b, 1000)
	benchRequests(b, e, http.StatusOK, func(i int64) *http.Request {
		r := httptest.NewRequest("GET", "/projects/"+projects[i%int64(len(projects))], nil)
		r.Header.Set("Authorization", "Bearer "+member.Token)
		return r
	})
}

func BenchmarkProjectList(b *testing.B) {
	e, orgID, member, _ := benchOrg(b, 10000)
	benchRequests(b, e, http.StatusOK, func(i int64) *http.Request {
		q := url.Values{"$filter": {"status eq 'open'"}, "$top": {"50"}, "$skip": {fmt.Sprint((i * 50) % 5000)}}
		r := httptest.NewRequest("GET", "/organisations/"+orgID+"/projects?"+q.Encode(), nil)
		r.Header.Set("Authorization", "Bearer "+member.Token)
		return r
	})
}

func BenchmarkProjectCreate(b *testing.B) {
	e, orgID, member, _ := benchOrg(b, 0)
	benchRequests(b, e, http.StatusCreated, func(i int64) *http.Request {
		r := httptest.NewRequest("POST", "/organisations/"+orgID+"/projects",
			strings.NewReader(fmt.Sprintf(`{"name":"load %d","code":"L%d"}`, i, i%100000)))
		r.Header.Set("Authorization", "Bearer "+member.Token)
		r.Header.Set("Content-Type", "application/json")
		return r
	})
}
