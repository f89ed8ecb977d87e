// Command loadbench measures the real server over loopback: it builds and
// starts `workspace serve` on a temp database, seeds one organisation with
// projects and members whose access comes through a role grant, then drives
// HTTP load and prints requests/s, p50/p99 latency per operation and the
// server's peak memory. It also starts the bare ceiling (./ceiling: router,
// one prepared SELECT, JSON) and alternates ceiling and service runs
// (A B A B ...), printing each operation's throughput as a ratio to the
// ceiling's GET measured in the same run.
//
//	go run ./server/loadbench [-projects 10000] [-members 50] [-conns 50] [-duration 10s] [-rounds 2]
//
// With -soak it instead holds a fixed mixed rate (-rate, reads, lists,
// creates, cell edits and uploads) for -soak-for (10m) and prints the server's
// memory and p99 every -soak-every (soak.go); it fails on an error or on
// memory growth over -soak-max-growth.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	var (
		bin         = flag.String("bin", "", "server binary (default: go build the module)")
		projects    = flag.Int("projects", 10000, "projects to seed")
		members     = flag.Int("members", 50, "members to seed")
		conns       = flag.Int("conns", 50, "concurrent connections")
		duration    = flag.Duration("duration", 10*time.Second, "load time per operation")
		synchronous = flag.String("synchronous", "FULL", "server --synchronous")
		keep        = flag.Bool("keep", false, "keep the temp directory")
		rounds      = flag.Int("rounds", 2, "ceiling/service alternations")
		only        = flag.String("only", "", "run only the operations whose name contains this")
		clauses     = flag.Int("clauses", 10000, "clauses of the document the cell edits change (0: no document)")
		profile     = flag.String("profile", "", "write a CPU profile of the server for each operation of the last round to this directory")
		soakOn      = flag.Bool("soak", false, "instead of the throughput rounds, hold -rate requests/s of a mixed load for -soak-for and sample memory and p99")
		soakFor     = flag.Duration("soak-for", 10*time.Minute, "how long the soak lasts")
		rate        = flag.Int("rate", 300, "the soak's requests per second")
		every       = flag.Duration("soak-every", 10*time.Second, "the soak's sampling interval")
		maxGrowth   = flag.Float64("soak-max-growth", 0.20, "the soak fails when memory at the end exceeds the sample after the first minute (a third of a shorter soak) by more than this fraction")
	)
	flag.Parse()
	var sc *soakConfig
	if *soakOn {
		sc = &soakConfig{duration: *soakFor, every: *every, rate: *rate, conns: *conns, profileDir: *profile, maxGrowth: *maxGrowth}
	}
	if err := run(*bin, *projects, *members, *clauses, *conns, *duration, *synchronous, *keep, *rounds, *only, *profile, sc); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(bin string, nProjects, nMembers, nClauses, conns int, duration time.Duration, synchronous string, keep bool, rounds int, only, profileDir string, sc *soakConfig) error {
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	if bin == "" {
		bin = filepath.Join(dir, "workspace")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = moduleRoot()
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	var ceiling *exec.Cmd
	var ceilingAddr string
	if sc == nil { // the soak measures the service alone
		ceilingBin := filepath.Join(dir, "ceiling")
		build := exec.Command("go", "build", "-o", ceilingBin, "./server/loadbench/ceiling")
		build.Dir = moduleRoot()
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build ceiling: %w", err)
		}
		if ceilingAddr, err = freeAddr(); err != nil {
			return err
		}
		ceiling = exec.Command(ceilingBin, "-addr", ceilingAddr, "-db", filepath.Join(dir, "ceiling.db"), "-rows", strconv.Itoa(nProjects))
		ceiling.Stdout, ceiling.Stderr = io.Discard, os.Stderr
		if err := ceiling.Start(); err != nil {
			return err
		}
		defer func() { _ = ceiling.Process.Kill(); _ = ceiling.Wait() }()
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	// One loopback address stands for every seeded user here, so the
	// per-address guessing limit (which counts each registration) is lifted.
	args := []string{"serve", "--addr", addr, "--db", filepath.Join(dir, "bench.db"), "--synchronous", synchronous,
		"--address-attempts", "1000000", "--max-conns-per-address", "0"}
	var metricsAddr string
	if profileDir != "" {
		if metricsAddr, err = freeAddr(); err != nil {
			return err
		}
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return err
		}
		args = append(args, "--metrics-addr", metricsAddr)
	}
	srv := exec.Command(bin, args...)
	srv.Stdout, srv.Stderr = io.Discard, logf
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()

	c := &client{base: "http://" + addr, http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, IdleConnTimeout: time.Minute,
	}}}
	if err := c.waitHealthy(30 * time.Second); err != nil {
		return err
	}
	if ceiling != nil {
		if err := (&client{base: "http://" + ceilingAddr, http: c.http}).waitHealthy(30 * time.Second); err != nil {
			return fmt.Errorf("ceiling: %w", err)
		}
	}
	start := time.Now()
	fx, err := seed(c, nProjects, nMembers, conns)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Printf("seeded 1 organisation, %d projects, %d members with roles in %s; server peak so far%s MB\n", nProjects, nMembers, time.Since(start).Round(time.Millisecond), peakSoFar(srv.Process.Pid))
	var doc *document
	if nClauses > 0 {
		start = time.Now()
		if doc, err = seedDocument(c, fx, nClauses); err != nil {
			return fmt.Errorf("seed document: %w", err)
		}
		fmt.Printf("seeded a document of %d clauses in %s; server peak so far%s MB\n", nClauses, time.Since(start).Round(time.Millisecond), peakSoFar(srv.Process.Pid))
	}
	fmt.Println()
	if sc != nil {
		sc.metricsAddr = metricsAddr
		return soak(addr, srv.Process.Pid, fx, doc, nProjects, *sc)
	}

	// The measured phase uses raw keep-alive connections and pre-built
	// requests, as wrk does: net/http's client cost more CPU than the server
	// it was measuring, on the same two cores.
	host := addr
	type operation struct {
		name string
		want int
		req  func(worker, i int) []byte
		// seen, when set, reads each answer's body (a change's new hash).
		seen func(worker int, body []byte)
	}
	ops := []operation{
		{"GET /projects/{id} (role grant)", http.StatusOK, func(w, i int) []byte {
			return rawRequest("GET", host, "/projects/"+fx.projects[(w*7919+i)%len(fx.projects)], fx.tokens[w%len(fx.tokens)], nil)
		}, nil},
		{"GET /organisations/{id}/projects $filter $top=50", http.StatusOK, func(w, i int) []byte {
			q := url.Values{"$filter": {"status eq 'open'"}, "$top": {"50"}, "$skip": {strconv.Itoa(((w*31 + i) * 50) % 5000)}}
			return rawRequest("GET", host, "/organisations/"+fx.org+"/projects?"+q.Encode(), fx.tokens[w%len(fx.tokens)], nil)
		}, nil},
		{"POST /organisations/{id}/projects", http.StatusCreated, func(w, i int) []byte {
			body := fmt.Sprintf(`{"name":"load %d-%d","code":"L%d"}`, w, i, i%100000)
			return rawRequest("POST", host, "/organisations/"+fx.writeOrg+"/projects", fx.tokens[w%len(fx.tokens)], []byte(body))
		}, nil},
	}
	if doc != nil {
		// Each worker edits its own clauses (index = worker mod conns), on
		// the revision its previous edit made: a change on an older base than
		// the head lands on the head by merging, as concurrent editors do.
		bases := make([]string, conns)
		ops = append(ops, operation{fmt.Sprintf("PATCH a cell of a %d-clause document", len(doc.clauses)), http.StatusOK, func(w, i int) []byte {
			if bases[w] == "" {
				bases[w] = doc.head
			}
			cl := doc.clauses[(w+conns*i)%len(doc.clauses)]
			body := fmt.Sprintf(`{"clause_id":%q,"column_id":%q,"value":"edit %d-%d"}`, cl, doc.column, w, i)
			return rawRequest("PATCH", host, "/documents/"+doc.id+"/revisions/"+bases[w]+"/fields", doc.token, []byte(body))
		}, func(w int, body []byte) {
			var out struct{ Hash string }
			if json.Unmarshal(body, &out) == nil && out.Hash != "" {
				bases[w] = out.Hash
			}
		}})
	}
	if only != "" {
		kept := ops[:0]
		for _, op := range ops {
			if strings.Contains(op.name, only) {
				kept = append(kept, op)
			}
		}
		ops = kept
	}
	ceilingGet := func(w, i int) []byte {
		// The same request size as the service's GET: the token is sent and ignored.
		return rawRequest("GET", ceilingAddr, "/items/"+strconv.Itoa(1+(w*7919+i)%nProjects), fx.tokens[w%len(fx.tokens)], nil)
	}
	var ceilingSum float64
	sums := make([]float64, len(ops))
	fmt.Printf("%-50s %10s %10s %10s %8s %s\n", "operation", "req/s", "p50", "p99", "errors", "  cpu µs/req: server load idle, peak MB so far of the process measured")
	report := func(name string, r result, pid int) {
		fmt.Printf("%-50s %10.0f %10s %10s %8d %9.0f %5.0f %5.0f %s\n", name, r.rps, r.p50, r.p99, r.errors,
			r.cpu.server, r.cpu.load, r.cpu.idle, peakSoFar(pid))
		if r.firstErr != nil {
			fmt.Printf("  first error: %v\n", r.firstErr)
		}
	}
	for round := 1; round <= rounds; round++ {
		fmt.Printf("-- round %d\n", round)
		r := measure(ceiling.Process.Pid, func() result {
			return drive(ceilingAddr, conns, duration, http.StatusOK, ceilingGet, nil)
		})
		report("ceiling: GET /items/{id} (bare router+SELECT+JSON)", r, ceiling.Process.Pid)
		ceilingSum += r.rps
		for i, op := range ops {
			var profiled chan error
			var before batchStats
			if profileDir != "" && round == rounds {
				before, _ = readBatchStats(metricsAddr)
				profiled = make(chan error, 1)
				go func() { profiled <- cpuProfile(metricsAddr, duration, filepath.Join(profileDir, profileName(op.name))) }()
			}
			r := measure(srv.Process.Pid, func() result {
				return drive(addr, conns, duration, op.want, op.req, op.seen)
			})
			report(op.name, r, srv.Process.Pid)
			sums[i] += r.rps
			if profiled != nil {
				if err := <-profiled; err != nil {
					return fmt.Errorf("profile %s: %w", op.name, err)
				}
				if after, err := readBatchStats(metricsAddr); err == nil && after.batches > before.batches {
					n := after.batches - before.batches
					fmt.Printf("  group commits: %.0f, %.1f transactions and %.2f ms each on average\n",
						n, (after.members-before.members)/n, 1000*(after.seconds-before.seconds)/n)
				}
			}
		}
	}
	fmt.Printf("\nratio to the ceiling's GET, over %d alternating rounds (ceiling mean %.0f req/s):\n", rounds, ceilingSum/float64(rounds))
	for i, op := range ops {
		fmt.Printf("%-50s %10.2f\n", op.name, sums[i]/ceilingSum)
	}
	peak, err := peakRSS(srv.Process.Pid)
	if err == nil {
		fmt.Printf("\nserver peak memory (VmHWM): %.1f MB\n", float64(peak)/1024)
	}
	fmt.Printf("connections %d, %s per operation, synchronous=%s, GOMAXPROCS %d, %s\n", conns, duration, synchronous, runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02"))
	return nil
}

type fixture struct {
	org      string
	writeOrg string // where POST creates projects, so the read organisation keeps its size across rounds
	projects []string
	tokens   []string // members' tokens; their access comes through a role
	owner    string   // the owner's token
}

// seed makes an owner, an organisation where @everyone may NOT view projects,
// a role that may view and create them, members holding that role, and the
// projects.
func seed(c *client, nProjects, nMembers, conns int) (*fixture, error) {
	owner, err := c.account("owner@bench.test")
	if err != nil {
		return nil, err
	}
	var org struct{ ID string }
	if err := c.expect(201, "POST", "/organisations", owner, map[string]any{"name": "Bench Org"}, &org); err != nil {
		return nil, err
	}
	fx := &fixture{org: org.ID, owner: owner}
	if err := c.expect(200, "PUT", "/organisations/"+org.ID+"/permissions/"+org.ID, owner,
		map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "deny"}}, nil); err != nil {
		return nil, fmt.Errorf("deny @everyone: %w", err)
	}
	var roles []string
	for i := 0; i < 5; i++ {
		var role struct{ ID string }
		if err := c.expect(201, "POST", "/organisations/"+org.ID+"/roles", owner, map[string]any{"alias": fmt.Sprintf("crew %d", i)}, &role); err != nil {
			return nil, fmt.Errorf("role: %w", err)
		}
		if err := c.expect(200, "PUT", "/organisations/"+org.ID+"/permissions/"+role.ID, owner,
			map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow", "CREATE_PROJECTS": "allow"}}, nil); err != nil {
			return nil, fmt.Errorf("grant role: %w", err)
		}
		roles = append(roles, role.ID)
	}
	var invite struct{ Code string }
	if err := c.expect(201, "POST", "/organisations/"+org.ID+"/invites", owner, map[string]any{}, &invite); err != nil {
		return nil, fmt.Errorf("invite: %w", err)
	}
	for i := 0; i < nMembers; i++ {
		tok, err := c.account(fmt.Sprintf("member%d@bench.test", i))
		if err != nil {
			return nil, err
		}
		if err := c.expect(200, "POST", "/invites/"+invite.Code, tok, nil, nil); err != nil {
			return nil, fmt.Errorf("use invite: %w", err)
		}
		var me struct{ ID string }
		if err := c.expect(200, "GET", "/users/@me", tok, nil, &me); err != nil {
			return nil, err
		}
		if err := c.expect(204, "PUT", "/organisations/"+org.ID+"/members/"+me.ID+"/roles/"+roles[i%len(roles)], owner, nil, nil); err != nil {
			return nil, fmt.Errorf("assign role: %w", err)
		}
		fx.tokens = append(fx.tokens, tok)
	}
	// A second organisation for the POST load, where @everyone may create
	// projects (access through a grant, as in the first).
	var org2 struct{ ID string }
	if err := c.expect(201, "POST", "/organisations", owner, map[string]any{"name": "Bench Writes"}, &org2); err != nil {
		return nil, err
	}
	fx.writeOrg = org2.ID
	if err := c.expect(200, "PUT", "/organisations/"+org2.ID+"/permissions/"+org2.ID, owner,
		map[string]any{"permissions": map[string]string{"CREATE_PROJECTS": "allow"}}, nil); err != nil {
		return nil, fmt.Errorf("allow @everyone: %w", err)
	}
	var invite2 struct{ Code string }
	if err := c.expect(201, "POST", "/organisations/"+org2.ID+"/invites", owner, map[string]any{}, &invite2); err != nil {
		return nil, fmt.Errorf("invite: %w", err)
	}
	for _, tok := range fx.tokens {
		if err := c.expect(200, "POST", "/invites/"+invite2.Code, tok, nil, nil); err != nil {
			return nil, fmt.Errorf("use invite: %w", err)
		}
	}
	ids := make([]string, nProjects)
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, conns)
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= nProjects {
					return
				}
				status := "open"
				if i%10 == 0 {
					status = "closed"
				}
				var p struct{ ID string }
				if err := c.expect(201, "POST", "/organisations/"+org.ID+"/projects", owner,
					map[string]any{"name": fmt.Sprintf("Project %05d", i), "code": fmt.Sprintf("P%05d", i), "status": status}, &p); err != nil {
					errc <- err
					return
				}
				ids[i] = p.ID
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	fx.projects = ids
	return fx, nil
}

// document is a document the cell-edit load changes: its default branch's
// head when seeded, the clauses and the text column the edits write.
type document struct {
	id, head, column, token string
	clauses                 []string
}

// seedDocument makes, as the owner, a document in the writes organisation
// with one text column and n clauses, appended one change at a time.
func seedDocument(c *client, fx *fixture, n int) (*document, error) {
	d := &document{token: fx.owner}
	var created struct {
		ID            string
		DefaultBranch struct{ Revision struct{ Hash string } } `json:"default_branch"`
	}
	if err := c.expect(201, "POST", "/documents", fx.owner, map[string]any{"organisation_id": fx.writeOrg, "title": "Load"}, &created); err != nil {
		return nil, err
	}
	d.id, d.head = created.ID, created.DefaultBranch.Revision.Hash
	// A change answers the new revision, not the new object's id: the
	// column's and the clauses' ids are read back from the last revision.
	var change struct{ Hash string }
	if err := c.expect(200, "POST", "/documents/"+d.id+"/revisions/"+d.head+"/columns", fx.owner, map[string]any{"name": "Val", "type": "text"}, &change); err != nil {
		return nil, fmt.Errorf("column: %w", err)
	}
	d.head = change.Hash
	for i := 0; i < n; i++ {
		body := map[string]any{"text": fmt.Sprintf("Clause %d: the contractor shall provide the works described.", i)}
		if err := c.expect(200, "POST", "/documents/"+d.id+"/revisions/"+d.head+"/clauses", fx.owner, body, &change); err != nil {
			return nil, fmt.Errorf("clause %d: %w", i, err)
		}
		d.head = change.Hash
	}
	var columns []struct {
		ID string `json:"column_id"`
	}
	if err := c.expect(200, "GET", "/documents/"+d.id+"/revisions/"+d.head+"/columns", fx.owner, nil, &columns); err != nil || len(columns) != 1 || columns[0].ID == "" {
		return nil, fmt.Errorf("columns: %d, %v", len(columns), err)
	}
	d.column = columns[0].ID
	for skip := 0; skip < n; skip += 1000 {
		var page []struct {
			ClauseID string `json:"clause_id"`
		}
		if err := c.expect(200, "GET", fmt.Sprintf("/documents/%s/revisions/%s/clauses?$skip=%d&$top=1000", d.id, d.head, skip), fx.owner, nil, &page); err != nil {
			return nil, fmt.Errorf("clauses: %w", err)
		}
		for _, cl := range page {
			d.clauses = append(d.clauses, cl.ClauseID)
		}
	}
	if len(d.clauses) != n {
		return nil, fmt.Errorf("read back %d clauses, want %d", len(d.clauses), n)
	}
	return d, nil
}

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
	firstErr error
	cpu      cpuPerRequest
}

// cpuPerRequest divides the CPU time (user and system, from /proc) the server
// and this load generator spent during a run, and the machine's idle time, by
// the requests answered: steadier than req/s on a shared machine, and it
// shows whether a run was CPU-bound (idle near zero) or waiting on something.
type cpuPerRequest struct{ server, load, idle float64 }

// measure runs drive and adds the CPU each side spent per request.
func measure(pid int, drive func() result) result {
	srv0, self0, idle0 := procTicks(pid), procTicks(os.Getpid()), idleTicks()
	start := time.Now()
	r := drive()
	n := r.rps * time.Since(start).Seconds()
	if n > 0 {
		µs := func(ticks int64) float64 { return float64(ticks) * 1e6 / clockTicks / n }
		r.cpu = cpuPerRequest{server: µs(procTicks(pid) - srv0), load: µs(procTicks(os.Getpid()) - self0), idle: µs(idleTicks() - idle0)}
	}
	return r
}

// clockTicks is USER_HZ, the unit of /proc's times: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// procTicks is a process's user plus system time (fields 14 and 15 of
// /proc/PID/stat, counted after the parenthesised command name); 0 where
// /proc is absent.
func procTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// idleTicks is the machine's idle plus I/O-wait time over all CPUs (the
// first line of /proc/stat).
func idleTicks() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 {
		return 0
	}
	idle, _ := strconv.ParseInt(f[4], 10, 64)
	wait, _ := strconv.ParseInt(f[5], 10, 64)
	return idle + wait
}

// drive sends requests from conns workers, each on its own keep-alive
// connection, for d and summarises the latencies.
func drive(addr string, conns int, d time.Duration, want int, req func(worker, i int) []byte, seen func(worker int, body []byte)) result {
	lat := make([][]time.Duration, conns)
	var errs atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	begin := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rc *rawConn
			fail := func(err error) {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
			for i := 0; time.Now().Before(deadline); i++ {
				if rc == nil {
					c, err := net.Dial("tcp", addr)
					if err != nil {
						fail(err)
						continue
					}
					rc = &rawConn{c: c, br: bufio.NewReaderSize(c, 64<<10)}
				}
				b := req(w, i)
				t0 := time.Now()
				status, body, err := rc.roundTrip(b, seen != nil)
				if err != nil {
					rc.c.Close()
					rc = nil
					fail(err)
					continue
				}
				if status != want {
					fail(fmt.Errorf("status %d, want %d", status, want))
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
				if seen != nil {
					seen(w, body)
				}
			}
			if rc != nil {
				rc.c.Close()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	r := result{errors: errs.Load()}
	if e, ok := firstErr.Load().(error); ok {
		r.firstErr = e
	}
	if len(all) == 0 {
		return r
	}
	r.rps = float64(len(all)) / elapsed.Seconds()
	r.p50 = all[len(all)*50/100].Round(10 * time.Microsecond)
	r.p99 = all[len(all)*99/100].Round(10 * time.Microsecond)
	return r
}

func rawRequest(method, host, path, token string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", method, path, host, token)
	if body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// rawConn is a minimal HTTP/1.1 keep-alive client: write a request, read
// the status line, headers and a Content-Length body (the server always
// sends one for these responses).
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func (rc *rawConn) roundTrip(req []byte, keepBody bool) (int, []byte, error) {
	if _, err := rc.c.Write(req); err != nil {
		return 0, nil, err
	}
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 12 {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	length := 0
	for {
		h, err := rc.br.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		if len(h) <= 2 {
			break
		}
		if len(h) > 15 && strings.EqualFold(string(h[:15]), "Content-Length:") {
			length, _ = strconv.Atoi(strings.TrimSpace(string(h[15:])))
		}
	}
	if keepBody {
		body := make([]byte, length)
		if _, err := io.ReadFull(rc.br, body); err != nil {
			return 0, nil, err
		}
		return status, body, nil
	}
	if _, err := rc.br.Discard(length); err != nil {
		return 0, nil, err
	}
	return status, nil, nil
}

type client struct {
	base string
	http *http.Client
}

func (c *client) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := c.http.Get(c.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("server did not become healthy")
}

// account registers a user and signs in, returning an access token.
func (c *client) account(email string) (string, error) {
	if err := c.expect(201, "POST", "/auth/register", "", map[string]any{"email": email, "password": "bench-password"}, nil); err != nil {
		return "", fmt.Errorf("register: %w", err)
	}
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {"bench-password"}}
	resp, err := c.http.PostForm(c.base+"/oauth/token", form)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("token: status %d", resp.StatusCode)
	}
	return tok.AccessToken, nil
}

func (c *client) expect(want int, method, path, token string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// peakSoFar formats a process's peak resident set size for the tables, so a
// run shows which phase sets the peak; empty where /proc cannot say.
func peakSoFar(pid int) string {
	kb, err := peakRSS(pid)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" %5.1f", float64(kb)/1024)
}

// peakRSS reads the peak resident set size (kB) of a process on Linux.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM")
}

// moduleRoot finds the directory holding go.mod, from the working directory up.
func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// cpuProfile fetches the server's CPU profile (pprof, on the metrics
// listener) over the middle of a run: a second in from its start, a second
// before its end, so connection set-up and draining stay out of it.
func cpuProfile(metricsAddr string, run time.Duration, file string) error {
	secs := int((run - 2*time.Second) / time.Second)
	if secs < 1 {
		return fmt.Errorf("-duration must be at least 3s to profile")
	}
	time.Sleep(time.Second)
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", metricsAddr, secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof answered %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// batchStats are the server's group-commit totals from its metrics.
type batchStats struct{ batches, members, seconds float64 }

// readBatchStats reads the write batch histograms' counts and sums, so a
// profiled run also tells how many transactions shared each commit.
func readBatchStats(metricsAddr string) (batchStats, error) {
	var st batchStats
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "workspace_db_write_batch_transactions_count":
			st.batches = v
		case "workspace_db_write_batch_transactions_sum":
			st.members = v
		case "workspace_db_write_batch_duration_seconds_sum":
			st.seconds = v
		}
	}
	return st, nil
}

// profileName makes a file name of an operation's name.
func profileName(op string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, op)
	return strings.Trim(name, "_") + ".prof"
}
