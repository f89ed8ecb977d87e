// Command syncfault is the sync fault run (issue 31, docs/sync.md "The fault
// run"): a hub and two laptops (-laptops N) as real `workspace serve`
// processes, a TCP proxy between each laptop and the hub (a laptop reaches
// its hub only through its own) that drops, delays, cuts and resets
// connections at random, writers on every side through the HTTP API
// (projects, work items, asset logs, visitors' signatures of a toolbox
// talk, clauses added to a shared document's main and cells of its shared
// clauses set, organisation images uploaded, roles given and taken, role
// permissions changed, a member removed and joining again, project edits,
// asset logs' attachments, induction PDFs, the owner's own induction
// records and witness records of work items (opened with the owner's TOTP
// codes); every acknowledged create recorded with its id or the unique
// name, e-mail, text or file hash the writer gave it), links reset whole at
// random moments, and `kill -9` of any node (the laptops exchange every
// second, so a kill or a reset often lands in the middle of an exchange),
// each restarted on the same file. After the cycles, a quiet exchange (no
// faults, no writers; every laptop in turn) until no node moves, then every
// file is compared with the hub's. A clause text acknowledged on any side
// must be in the head of main or of a site/<node>/<branch> branch on the hub
// (a conflict keeps it there) and in no head twice; security changes are
// judged only by the tables' equality and the audit chains (the sync rules
// settle two sides' decisions, the stricter winning).
//
//	go run ./server/syncfault [-cycles 300] [-seed N] [-bin FILE] [-keep] [-laptops 2] [-doc-conflicts] [-bulk N]
//
// -doc-conflicts: every side also rewrites one shared clause, so document
// merges conflict. -bulk N: N asset logs written on the first laptop's file
// while it is offline, sent in the quiet exchange through a fresh hub
// process whose peak RSS over that exchange alone is printed.
//
// It prints cycles, acknowledged writes on the hub and the laptops, lost,
// duplicated, replicated tables that differ (every replicated table of the
// catalogue, derived columns and a person's own rows left out), chains that
// fail audit verify and integrity_check results (and the peak RSS of the
// hub's and the laptops' processes); all but the first two must be zero, or
// it exits 1. The seed is printed: -seed replays the same choices (the
// processes' timing is not replayed, so a replay is likely, not certain, to
// meet the same fault).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"workspace/db"
)

func main() {
	var (
		bin     = flag.String("bin", "", "server binary (default: go build the module)")
		cycles  = flag.Int("cycles", 300, "fault cycles")
		seed    = flag.Uint64("seed", 0, "random seed (default: from the clock; printed)")
		keep    = flag.Bool("keep", false, "keep the temp directory (the two files)")
		cycleMS = flag.Int("cycle-ms", 1500, "longest cycle in milliseconds (each lasts a random part of it)")
		clash   = flag.Bool("doc-conflicts", false, "both sides also rewrite one shared clause, so document merges conflict")
		laptops = flag.Int("laptops", 2, "site nodes paired with the hub, each writing, killed and cut off apart")
		bulk    = flag.Int("bulk", 0, "asset logs written on the laptop's file while it is offline before the quiet exchange (the hub's peak RSS is measured over that exchange)")
	)
	flag.Parse()
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	fmt.Printf("syncfault: seed %d (replay with -seed %d)\n", *seed, *seed)
	rep, err := run(*bin, *cycles, *seed, *keep, time.Duration(*cycleMS)*time.Millisecond, *bulk, *clash, *laptops)
	if err != nil {
		fmt.Fprintln(os.Stderr, "syncfault:", err)
		os.Exit(1)
	}
	rep.print()
	if !rep.ok() {
		fmt.Fprintf(os.Stderr, "syncfault: FAILED (seed %d)\n", *seed)
		os.Exit(1)
	}
	fmt.Println("syncfault: passed")
}

type report struct {
	cycles, kills, faults       int
	laptops                     int
	ackHub, ackLaptop           int
	edits                       int
	lost, duplicated            int
	tablesDiffer, auditFailures int
	integrity, provisional      int
	hubPeakMB, sitePeakMB       float64
	bulk, quietSent             int     // offline changes written before the quiet exchange; what it sent
	hubQuietMB                  float64 // the hub process's peak RSS over the quiet exchange alone
	details                     []string
}

func (r report) ok() bool {
	return r.lost == 0 && r.duplicated == 0 && r.tablesDiffer == 0 && r.auditFailures == 0 && r.integrity == 0 && r.provisional == 0
}

func (r report) print() {
	fmt.Printf("cycles                          %d (kill -9: %d, proxy faults: %d)\n", r.cycles, r.kills, r.faults)
	fmt.Printf("acknowledged writes, hub        %d\n", r.ackHub)
	fmt.Printf("acknowledged writes, laptops    %d (%d laptops)\n", r.ackLaptop, r.laptops)
	fmt.Printf("acknowledged edits (not keyed)  %d\n", r.edits)
	fmt.Printf("lost                            %d\n", r.lost)
	fmt.Printf("duplicated                      %d\n", r.duplicated)
	fmt.Printf("replicated tables that differ   %d\n", r.tablesDiffer)
	fmt.Printf("chains failing audit verify     %d\n", r.auditFailures)
	fmt.Printf("integrity_check not ok          %d\n", r.integrity)
	fmt.Printf("provisional numbers left        %d\n", r.provisional)
	fmt.Printf("peak RSS, hub / laptop process  %.1f / %.1f MB\n", r.hubPeakMB, r.sitePeakMB)
	fmt.Printf("quiet exchange                  %d changes sent (%d written offline first); hub peak RSS %.1f MB\n", r.quietSent, r.bulk, r.hubQuietMB)
	for _, d := range r.details {
		fmt.Println("  " + d)
	}
}

// node is one `workspace serve` process on a file, restarted on the same
// address after a kill.
type node struct {
	name, bin, dbPath, addr string
	extra                   []string
	logf                    *os.File
	mu                      sync.Mutex
	cmd                     *exec.Cmd
	peakKB                  int64 // the largest peak RSS of its processes so far
}

// notePeak reads the running process's peak RSS (VmHWM, the real child's)
// before it goes, and returns it.
func (n *node) notePeak() int64 {
	if n.cmd == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
				n.peakKB = max(n.peakKB, kb)
				return kb
			}
		}
	}
	return 0
}

func (n *node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	args := append([]string{"serve", "--addr", n.addr, "--db", n.dbPath, "--synchronous", "NORMAL",
		"--address-attempts", "1000000", "--max-conns-per-address", "0"}, n.extra...)
	for attempt := 0; ; attempt++ {
		cmd := exec.Command(n.bin, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, n.logf
		if err := cmd.Start(); err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if err := waitHealthy("http://"+n.addr, done, 60*time.Second); err != nil {
			_ = cmd.Process.Kill()
			// The address may still be held for a moment after a kill.
			if attempt < 20 && errors.Is(err, errExited) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return fmt.Errorf("%s did not start: %w (log %s)", n.name, err, n.logf.Name())
		}
		n.cmd = cmd
		go func() { <-done }()
		return nil
	}
}

// kill is kill -9: no shutdown, the file as the process left it.
func (n *node) kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notePeak()
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		for i := 0; i < 200; i++ { // wait until the process is gone
			if n.cmd.Process.Signal(syscall.Signal(0)) != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		n.cmd = nil
	}
}

// stop is a clean shutdown.
func (n *node) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notePeak()
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(os.Interrupt)
		for i := 0; i < 3000; i++ {
			if n.cmd.Process.Signal(syscall.Signal(0)) != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		n.cmd = nil
	}
}

var errExited = errors.New("the process exited")

func waitHealthy(base string, done <-chan error, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errExited
		default:
		}
		resp, err := c.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	return errors.New("not healthy in time")
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

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

// api is a small JSON client of one node.
type api struct {
	base  string
	token string
	http  *http.Client
}

func (a *api) do(method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err // the answer was cut: not acknowledged
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return 0, err
		}
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return resp.StatusCode, nil
}

// putFile sends one file as multipart/form-data (field "file").
func (a *api) putFile(path, name string, data []byte, out any) (int, error) {
	return a.sendFile("PUT", path, "file", name, data, out)
}

// sendFile sends one file as the multipart part field.
func (a *api) sendFile(method, path, field, name string, data []byte, out any) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile(field, name)
	if err != nil {
		return 0, err
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, err := http.NewRequest(method, a.base+path, &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return 0, err
		}
	}
	return resp.StatusCode, nil
}

// uniquePNG is a 16 x 16 image (an organisation image's smallest) whose
// pixels spell n: every upload is a file of its own, a hash of its own.
func uniquePNG(n int64) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for i := 0; i < 16*16; i++ {
		img.Pix[4*i] = byte(n >> (8 * (i % 8)))
		img.Pix[4*i+1] = byte(i)
		img.Pix[4*i+2] = byte(n >> 3)
		img.Pix[4*i+3] = 255
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

func (a *api) signIn(email, password string) error {
	resp, err := a.http.PostForm(a.base+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return fmt.Errorf("sign in: status %d", resp.StatusCode)
	}
	a.token = tok.AccessToken
	return nil
}

type idJSON struct {
	ID string `json:"id"`
}

// ack is one acknowledged create: the table, its id and the name it gave.
type ack struct {
	table, id, name string
}

// laptop is one site node: its process, its proxy to the hub, its writer's
// clients.
type laptop struct {
	side        string // "laptop", "laptop2", ...: its writer's name in the acknowledged writes
	node        *node
	px          *proxy
	api, member *api
}

func run(bin string, cycles int, seed uint64, keep bool, cycleMax time.Duration, bulk int, clash bool, laptops int) (rep report, err error) {
	if laptops < 1 {
		return rep, errors.New("-laptops must be 1 or more")
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dir, err := os.MkdirTemp("", "syncfault-")
	if err != nil {
		return rep, err
	}
	if keep {
		fmt.Println("syncfault: files in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if bin == "" {
		bin = filepath.Join(dir, "workspace")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = moduleRoot()
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return rep, fmt.Errorf("build: %w", err)
		}
	}
	hubAddr, err := freeAddr()
	if err != nil {
		return rep, err
	}
	hubLog, err := os.Create(filepath.Join(dir, "hub.log"))
	if err != nil {
		return rep, err
	}
	defer hubLog.Close()
	hub := &node{name: "hub", bin: bin, dbPath: filepath.Join(dir, "hub.db"), addr: hubAddr, logf: hubLog}
	if err := hub.start(); err != nil {
		return rep, err
	}
	defer hub.stop()

	// The organisation, a work item type and a project on the hub, then the
	// laptop cloned through the proxy (so its hub URL is the proxy's).
	hc := &http.Client{Timeout: 20 * time.Second}
	h := &api{base: "http://" + hubAddr, http: hc}
	const email, password = "owner@example.com", "fault-run-password"
	if _, err := h.do("POST", "/auth/register", map[string]any{"email": email, "password": password, "first_name": "Olive"}, nil); err != nil {
		return rep, err
	}
	if err := h.signIn(email, password); err != nil {
		return rep, err
	}
	var org, wit, proj idJSON
	if _, err := h.do("POST", "/organisations", map[string]any{"name": "Fault run"}, &org); err != nil {
		return rep, err
	}
	if _, err := h.do("POST", "/organisations/"+org.ID+"/work-item-types", map[string]any{"name": "Defect"}, &wit); err != nil {
		return rep, err
	}
	if _, err := h.do("POST", "/organisations/"+org.ID+"/projects", map[string]any{"name": "Shared"}, &proj); err != nil {
		return rep, err
	}
	// An asset to log against (asset logs are evidence: a union, never
	// edited by sync). Left out, and said, if the catalogue refuses.
	var atype, asset idJSON
	if _, err := h.do("POST", "/organisations/"+org.ID+"/asset-types", map[string]any{"name": "Crane", "ephemerality": 0}, &atype); err != nil {
		fmt.Println("syncfault: no asset logs:", err)
	} else if _, err := h.do("POST", "/organisations/"+org.ID+"/assets", map[string]any{"type_id": atype.ID, "name": "Crane 1"}, &asset); err != nil {
		fmt.Println("syncfault: no asset logs:", err)
		asset.ID = ""
	}
	fx, err := setupFixtures(h, org.ID)
	if err != nil {
		return rep, err
	}
	// Work items every side may witness: the owner witnessing one on two
	// offices' copies makes two records the sync keeps, the later flagged
	// as a duplicate of the first.
	var shared []string
	for i := 0; i < 4; i++ {
		var out idJSON
		if _, err := h.do("POST", "/organisations/"+org.ID+"/workitems", map[string]any{"type_id": wit.ID, "title": fmt.Sprintf("shared-witness-%d", i), "project_id": proj.ID}, &out); err != nil {
			return rep, fmt.Errorf("shared work item: %w", err)
		}
		shared = append(shared, out.ID)
	}
	// Each laptop: a pairing code of its own, a proxy of its own (its link
	// fails apart from the others'), cloned through it.
	var sites []*laptop
	rep.laptops = laptops
	for i := 1; i <= laptops; i++ {
		l := &laptop{side: "laptop"}
		if i > 1 {
			l.side = fmt.Sprintf("laptop%d", i)
		}
		if l.px, err = newProxy(hubAddr, seed+uint64(i)-1); err != nil {
			return rep, err
		}
		defer l.px.close()
		addr, err := freeAddr()
		if err != nil {
			return rep, err
		}
		base := map[bool]string{true: "site", false: fmt.Sprintf("site%d", i)}[i == 1]
		logf, err := os.Create(filepath.Join(dir, base+".log"))
		if err != nil {
			return rep, err
		}
		defer logf.Close()
		var code struct {
			Code string `json:"code"`
		}
		if _, err := h.do("POST", "/organisations/"+org.ID+"/sync/pairing-codes", map[string]any{}, &code); err != nil {
			return rep, err
		}
		path := filepath.Join(dir, base+".db")
		l.px.setQuiet(true)
		if out, err := exec.Command(bin, "sync", "clone", "--from", "http://"+l.px.addr(), "--code", code.Code, "--db", path, "--name", fmt.Sprintf("Fault site %d", i)).CombinedOutput(); err != nil {
			return rep, fmt.Errorf("sync clone: %w\n%s", err, out)
		}
		l.node = &node{name: l.side, bin: bin, dbPath: path, addr: addr, logf: logf, extra: []string{"--registration=false", "--sync-every", "1s"}}
		if err := l.node.start(); err != nil {
			return rep, err
		}
		defer l.node.stop()
		l.api = &api{base: "http://" + addr, http: hc}
		if err := l.api.signIn(email, password); err != nil {
			return rep, err
		}
		// The second member on the laptop too, to join again there after
		// a removal; without it only the hub's writer re-adds them.
		l.member = &api{base: "http://" + addr, http: hc}
		if err := l.member.signIn(memberEmail, password); err != nil {
			fmt.Printf("syncfault: the member cannot sign in on %s: %v\n", l.side, err)
			l.member = nil
		}
		sites = append(sites, l)
	}

	// Writers: one per side, each with its own random stream.
	var mu sync.Mutex
	acks := map[string][]ack{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seq atomic.Int64
	docAcks := map[string][]string{} // clause texts acknowledged on each side
	var edits atomic.Int64           // acknowledged edits that are not creates (cells, security, images' rows)
	// witnessesOn signs the owner and the witnesses in on one node and
	// registers each one's TOTP secret there (a person's secrets never
	// travel).
	witnessesOn := func(owner *api) ([]*api, error) {
		out := []*api{owner}
		for _, mail := range fx.witnesses {
			w := &api{base: owner.base, http: hc}
			if err := w.signIn(mail, password); err != nil {
				return nil, err
			}
			out = append(out, w)
		}
		for _, w := range out {
			if _, err := w.do("PUT", "/users/@me/qr/token", map[string]any{"token": totpSecret}, nil); err != nil {
				return nil, fmt.Errorf("TOTP secret: %w", err)
			}
		}
		return out, nil
	}
	writer := func(side string, a, member *api, wits []*api, r *rand.Rand) {
		defer wg.Done()
		var mine []string      // projects this side made, to edit and file items in
		var toWitness []string // work items this side made, not yet witnessed
		toShare := append([]string(nil), shared...)
		r.Shuffle(len(toShare), func(i, j int) { toShare[i], toShare[j] = toShare[j], toShare[i] })
		spent := make([]map[int64]bool, len(wits)) // per witness, the code steps spent on this node
		signedShared := make([]bool, len(wits))    // per witness, whether they signed fx.toolbox on this side
		for i := range spent {
			spent[i] = map[int64]bool{}
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := seq.Add(1)
			var err error
			switch k := r.IntN(24); {
			case k < 6:
				name := fmt.Sprintf("fault-%s-p%d", side, n)
				var out idJSON
				if _, err = a.do("POST", "/organisations/"+org.ID+"/projects", map[string]any{"name": name}, &out); err == nil {
					mu.Lock()
					acks[side] = append(acks[side], ack{"projects", out.ID, name})
					mu.Unlock()
					mine = append(mine, out.ID)
				}
			case k < 10:
				title := fmt.Sprintf("fault-%s-w%d", side, n)
				p := proj.ID
				if len(mine) > 0 && r.IntN(2) == 0 {
					p = mine[r.IntN(len(mine))]
				}
				var out idJSON
				if _, err = a.do("POST", "/organisations/"+org.ID+"/workitems", map[string]any{"type_id": wit.ID, "title": title, "project_id": p}, &out); err == nil {
					mu.Lock()
					acks[side] = append(acks[side], ack{"work_items", out.ID, title})
					mu.Unlock()
					toWitness = append(toWitness, out.ID)
				}
			case k < 12 && asset.ID != "":
				text := fmt.Sprintf("fault-%s-l%d: pre-start check done", side, n)
				var out idJSON
				if _, err = a.do("POST", "/api/assetgroups/"+asset.ID+"/logs", map[string]any{"type": "comment", "log": text, "logged_at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}, &out); err == nil {
					mu.Lock()
					acks[side] = append(acks[side], ack{"asset_logs", out.ID, text})
					mu.Unlock()
				}
			case k < 14:
				// A visitor signs the talk: evidence, a union; the e-mail
				// is the writer's key (the answer names no row id).
				mail := fmt.Sprintf("fault-%s-s%d@example.com", side, n)
				if _, err = a.do("POST", "/toolboxes/"+fx.toolbox+"/sign", map[string]any{"email": mail, "first_name": "Visitor",
					"last_name": fmt.Sprint(n), "company": "Fault run", "declaration": true}, nil); err == nil {
					mu.Lock()
					acks[side] = append(acks[side], ack{"toolbox_users", "", mail})
					mu.Unlock()
				}
			case k == 15 && clash:
				// -doc-conflicts: the first shared clause rewritten from
				// the head this side holds; both sides' rewrites of one
				// clause conflict, so the site's head goes to a site
				// branch with a merge request. An edit (a later rewrite
				// replaces the text), judged by the tables and the heads.
				var hd string
				if hd, err = fx.head(a); err == nil {
					if _, err = a.do("PATCH", fx.rev(hd)+"/clauses/"+fx.clauses[0], map[string]any{"text": fmt.Sprintf("fault-%s-r%d: the gate is shut at dusk", side, n)}, nil); err == nil {
						edits.Add(1)
					}
				}
			case k < 16:
				// A clause added on main from the head this side holds:
				// the exchange fast-forwards, merges or sets it apart on
				// a site branch.
				text := fmt.Sprintf("fault-%s-c%d: keep the gate shut", side, n)
				var hd string
				if hd, err = fx.head(a); err == nil {
					if _, err = a.do("POST", "/documents/"+fx.document+"/revisions/"+hd+"/clauses", map[string]any{"text": text}, nil); err == nil {
						mu.Lock()
						docAcks[side] = append(docAcks[side], text)
						mu.Unlock()
					}
				}
			case k < 17:
				// A cell of a shared clause set on both sides: the same
				// cell from two sides is a conflict the hub sets apart.
				var hd string
				if hd, err = fx.head(a); err == nil {
					cl := fx.clauses[r.IntN(len(fx.clauses))]
					if _, err = a.do("PATCH", "/documents/"+fx.document+"/revisions/"+hd+"/fields", map[string]any{"clause_id": cl,
						"column_id": fx.column, "value": fmt.Sprintf("set on %s (%d)", side, n)}, nil); err == nil {
						edits.Add(1)
					}
				}
			case k < 18:
				// An organisation image: a file of its own (by hash),
				// which both files must hold once the image is shown.
				kind := []string{"icon", "banner", "logo"}[r.IntN(3)]
				var out struct {
					Icon   *string `json:"icon_hash"`
					Banner *string `json:"banner_hash"`
					Logo   *string `json:"logo_hash"`
				}
				if _, err = a.putFile("/organisations/"+org.ID+"/"+kind, kind+".png", uniquePNG(n), &out); err == nil {
					hash := map[string]*string{"icon": out.Icon, "banner": out.Banner, "logo": out.Logo}[kind]
					if hash == nil {
						err = fmt.Errorf("the %s answer names no hash", kind)
					} else {
						mu.Lock()
						acks[side] = append(acks[side], ack{"blobs", "", *hash})
						mu.Unlock()
					}
				}
			case k < 19:
				err = fx.securityChange(a, member, org.ID, r)
				if err == nil {
					edits.Add(1)
				}
			case k == 20 && asset.ID != "":
				// A file: an attachment on a new asset log (a blob sent by
				// hash), acknowledged once the upload's answer is read.
				text := fmt.Sprintf("fault-%s-a%d: photo attached", side, n)
				var l idJSON
				if _, err = a.do("POST", "/api/assetgroups/"+asset.ID+"/logs", map[string]any{"type": "comment", "log": text, "logged_at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}, &l); err != nil {
					break
				}
				name := fmt.Sprintf("fault-%s-f%d.txt", side, n)
				mu.Lock()
				acks[side] = append(acks[side], ack{"asset_logs", l.ID, text})
				mu.Unlock()
				if _, err = a.sendFile("PUT", "/api/assetlogs/"+l.ID+"/attachment", "file", name, []byte(fmt.Sprintf("site photo %s %d %d", side, n, r.Uint64())), nil); err == nil {
					mu.Lock()
					acks[side] = append(acks[side], ack{"attachments", l.ID, name})
					mu.Unlock()
				}
			case k == 21:
				// An induction's PDF replaced on this side: a new
				// revision (evidence) and a blob, both by hash; the
				// induction's row itself is an edit from both sides.
				pdf := uniquePDF(side, n)
				sum := sha256.Sum256(pdf)
				hash := hex.EncodeToString(sum[:])
				var out struct {
					RevisionID string  `json:"revision_id"`
					FileHash   *string `json:"file_hash"`
				}
				if _, err = a.sendFile("PATCH", "/inductions/"+fx.induction, "attachment", fmt.Sprintf("fault-%s-i%d.pdf", side, n), pdf, &out); err == nil {
					if out.FileHash == nil || *out.FileHash != hash {
						err = fmt.Errorf("the induction's answer names file %v, not %s", out.FileHash, hash)
						break
					}
					mu.Lock()
					acks[side] = append(acks[side], ack{"blobs", "", hash}, ack{"induction_revisions", out.RevisionID, hash})
					mu.Unlock()
				}
			case k == 22:
				// A person's own signature: the owner completes the
				// induction assigned to them (a record of their own),
				// answering its question with a text of this write's own.
				answer := fmt.Sprintf("fault-%s-n%d", side, n)
				var out idJSON
				if _, err = a.do("POST", "/users/@me/inductions/"+fx.induction+"/records", map[string]any{"answers": []any{map[string]any{"question_id": fx.question, "value": answer}}}, &out); err == nil {
					mu.Lock()
					acks[side] = append(acks[side], ack{"induction_records", out.ID, answer})
					mu.Unlock()
				}
			case k == 23 && r.IntN(3) == 0:
				// A person's own toolbox signature: first the talk made
				// before the clone (signed on every side: records of one
				// person and talk made apart, flagged), then a talk this
				// side makes and conducts.
				wi := r.IntN(len(wits))
				tb := fx.toolbox
				if signedShared[wi] {
					var out idJSON
					if _, err = a.do("POST", "/organisations/"+org.ID+"/toolboxes", map[string]any{"title": fmt.Sprintf("fault-%s-t%d", side, n)}, &out); err != nil {
						break
					}
					if _, err = a.do("POST", "/toolboxes/"+out.ID+"/conduct", map[string]any{"latitude": -33.86, "longitude": 151.2}, nil); err != nil {
						break
					}
					tb = out.ID
				}
				var user string
				user, err = signOwn(wits[wi], tb, spent[wi])
				if tb == fx.toolbox && (user != "" || (err != nil && !strings.Contains(err.Error(), ": 404 "))) {
					signedShared[wi] = true // signed, or maybe (a cut answer)
				}
				if err == nil && user != "" {
					mu.Lock()
					acks[side] = append(acks[side], ack{"own_signatures", tb, user})
					mu.Unlock()
				}
			case k == 23 && r.IntN(2) == 0:
				// A witness record of the document revision at main's
				// head on this side: sides holding the same head make
				// records of one person and object apart (flagged).
				var b struct {
					RevisionID string `json:"id"` // main's head: the revision itself
				}
				if _, err = a.do("GET", "/documents/"+fx.document+"/branches/main", nil, &b); err != nil {
					break
				}
				wi := r.IntN(len(wits))
				var id string
				if id, err = witness(wits[wi], b.RevisionID, spent[wi]); err == nil && id != "" {
					mu.Lock()
					acks[side] = append(acks[side], ack{"witness_records", id, b.RevisionID})
					mu.Unlock()
				}
			case k == 23 && len(toWitness)+len(toShare) > 0:
				// A witness record: the owner witnesses a work item this
				// side made (once: a second record of one person for one
				// object is a duplicate) or one made before the clone,
				// which other sides may witness too (their records are
				// kept, all but the first flagged duplicate_of).
				list := &toWitness
				if len(toShare) > 0 && (len(toWitness) == 0 || r.IntN(2) == 0) {
					list = &toShare
				}
				item := (*list)[len(*list)-1]
				wi := r.IntN(len(wits))
				if list == &toShare {
					wi = 0 // the owner, on every side: the records meet
				}
				var id string
				if id, err = witness(wits[wi], item, spent[wi]); err == nil && id != "" {
					*list = (*list)[:len(*list)-1]
					mu.Lock()
					acks[side] = append(acks[side], ack{"witness_records", id, item})
					mu.Unlock()
				} else if err != nil && !strings.Contains(err.Error(), ": 404 ") {
					// Not refused (a cut link, a killed node): the
					// record may exist, so the item is not tried again.
					*list = (*list)[:len(*list)-1]
				}
			default:
				// An edit of a shared row from both sides: converges by
				// the later clock, not counted as an acknowledged create.
				_, err = a.do("PATCH", "/projects/"+proj.ID, map[string]any{"description": fmt.Sprintf("edited on %s (%d)", side, n)}, nil)
			}
			if err != nil {
				time.Sleep(time.Duration(20+r.IntN(50)) * time.Millisecond)
			} else {
				time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
			}
		}
	}
	wg.Add(1 + len(sites))
	wits, err := witnessesOn(h)
	if err != nil {
		return rep, err
	}
	go writer("hub", h, fx.member, wits, rand.New(rand.NewPCG(rng.Uint64(), 1)))
	for i, l := range sites {
		wits, err := witnessesOn(l.api)
		if err != nil {
			close(stop)
			wg.Wait()
			return rep, err
		}
		go writer(l.side, l.api, l.member, wits, rand.New(rand.NewPCG(rng.Uint64(), uint64(2+i))))
	}
	// restart starts a killed node again; on failure the writers stop.
	restart := func(ns ...*node) error {
		for _, n := range ns {
			if err := n.start(); err != nil {
				close(stop)
				wg.Wait()
				return err
			}
		}
		return nil
	}

	start := time.Now()
	for _, l := range sites {
		l.px.setQuiet(false)
	}
	for c := 1; c <= cycles; c++ {
		length := time.Duration(100+rng.IntN(int(cycleMax/time.Millisecond))) * time.Millisecond
		time.Sleep(length)
		l := sites[rng.IntN(len(sites))] // the laptop this cycle's fault is on
		switch k := rng.IntN(10); {
		case k < 3: // kill -9 a laptop, often in the middle of an exchange
			l.node.kill()
			rep.kills++
			if err := restart(l.node); err != nil {
				return rep, err
			}
		case k < 5:
			hub.kill()
			rep.kills++
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			if err := restart(hub); err != nil {
				return rep, err
			}
		case k < 8: // a link goes down, often in the middle of an exchange
			l.px.resetAll()
		case k < 9: // the hub and every laptop
			all := []*node{hub}
			for _, l := range sites {
				l.node.kill()
				all = append(all, l.node)
			}
			hub.kill()
			rep.kills += len(all)
			if err := restart(all...); err != nil {
				return rep, err
			}
		}
		rep.cycles = c
		if c%25 == 0 {
			mu.Lock()
			line := fmt.Sprintf("  cycle %d, %s: acknowledged hub %d", c, time.Since(start).Round(time.Second), len(acks["hub"]))
			faults := int64(0)
			for _, l := range sites {
				line += fmt.Sprintf(", %s %d", l.side, len(acks[l.side]))
				faults += l.px.faults.Load()
			}
			fmt.Printf("%s; proxy faults %d\n", line, faults)
			mu.Unlock()
		}
	}
	close(stop)
	wg.Wait()
	rep.ackHub = len(acks["hub"])
	rep.details = append(rep.details, "hub's acknowledged writes by kind: "+byKind(acks["hub"]))
	for _, l := range sites {
		rep.faults += int(l.px.faults.Load())
		rep.ackLaptop += len(acks[l.side])
		rep.details = append(rep.details, l.side+"'s acknowledged writes by kind: "+byKind(acks[l.side]))
	}

	// The quiet exchange: no faults, no writers; the laptops' serves are
	// stopped and each runs `sync now` in turn until two rounds in a row
	// move nothing on any of them (a laptop's changes reach the others
	// through the hub, so one quiet laptop is not enough).
	for _, l := range sites {
		l.px.setQuiet(true)
		l.node.stop()
	}
	if bulk > 0 {
		// A site month offline: evidence written on the first laptop's
		// file while its server is down (as the speed benchmark does), all
		// acknowledged, all to reach the hub in the quiet exchange.
		written, err := writeOffline(sites[0].node.dbPath, org.ID, asset.ID, email, bulk)
		if err != nil {
			return rep, fmt.Errorf("offline writes: %w", err)
		}
		acks[sites[0].side] = append(acks[sites[0].side], written...)
		rep.bulk = len(written)
		rep.ackLaptop += len(written)
	}
	// A fresh hub process, so its peak RSS is the quiet exchange's alone.
	hub.stop()
	if err := hub.start(); err != nil {
		return rep, err
	}
	quiet := 0
	for round := 0; round < 50 && quiet < 2; round++ {
		moved := false
		for _, l := range sites {
			out, err := exec.Command(bin, "sync", "now", "--db", l.node.dbPath).CombinedOutput()
			if err != nil {
				return rep, fmt.Errorf("quiet sync now on %s: %w\n%s", l.side, err, out)
			}
			var sent, received int
			if _, err := fmt.Sscanf(lastLine(string(out)), "sent %d changes, received %d", &sent, &received); err == nil {
				rep.quietSent += sent
			}
			if !strings.Contains(string(out), "sent 0 changes, received 0") {
				moved = true
			}
		}
		if moved {
			quiet = 0
		} else {
			quiet++
		}
	}
	hub.mu.Lock()
	rep.hubQuietMB = float64(hub.notePeak()) / 1024
	hub.mu.Unlock()
	if quiet < 2 {
		rep.details = append(rep.details, "the quiet exchange did not settle in 50 rounds")
		rep.tablesDiffer++
	}
	for side, texts := range docAcks {
		if side == "hub" {
			rep.ackHub += len(texts)
		} else {
			rep.ackLaptop += len(texts)
		}
	}
	rep.edits = int(edits.Load())
	if err := fx.checkDocument(&rep, h, docAcks); err != nil {
		return rep, err
	}
	hub.stop()
	rep.hubPeakMB = float64(hub.peakKB) / 1024
	var paths []string
	for _, l := range sites {
		rep.sitePeakMB = max(rep.sitePeakMB, float64(l.node.peakKB)/1024)
		paths = append(paths, l.node.dbPath)
	}
	fmt.Printf("syncfault: %d cycles in %s, quiet exchange done\n", rep.cycles, time.Since(start).Round(time.Second))
	return rep, compare(&rep, hub.dbPath, paths, acks)
}

// ownRows are a person's own rows besides the account: logged with no
// organisation and never sent (docs/sync.md, Accounts), so each node holds
// its own (the owner's TOTP secret is registered on each side).
var ownRows = map[string]bool{"user_emails": true, "user_identities": true, "user_totp_secrets": true}

// compare checks both files: every acknowledged create on both, once;
// every replicated table equal; audit chains; integrity.
func compare(rep *report, hubPath string, sitePaths []string, acks map[string][]ack) error {
	ctx := context.Background()
	conn, err := sql.Open("sqlite", "file:"+hubPath+"?mode=ro")
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	// Each laptop's file is attached as site, site2, ...; its writer's
	// name is laptop, laptop2, ...
	schemas := []string{"main"}
	owner := map[string]string{"main": "hub"}
	for i, p := range sitePaths {
		schema, side := "site", "laptop"
		if i > 0 {
			schema, side = fmt.Sprintf("site%d", i+1), fmt.Sprintf("laptop%d", i+1)
		}
		if _, err := conn.Exec(`ATTACH DATABASE ? AS `+schema, "file:"+p+"?mode=ro"); err != nil {
			return err
		}
		schemas = append(schemas, schema)
		owner[schema] = side
	}
	for _, schema := range schemas {
		for side, list := range acks {
			for _, a := range list {
				col := map[string]string{"projects": "name", "work_items": "title", "asset_logs": "log", "toolbox_users": "email", "blobs": "hash",
					"witness_records": "object_id", "induction_revisions": "file_hash"}[a.table]
				var n int
				var err error
				switch {
				case a.table == "attachments": // an asset log's file: its name on the log, its blob by hash
					err = conn.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %[1]s.asset_logs l JOIN %[1]s.blobs b ON b.hash = l.attachment_hash WHERE l.id = ? AND l.attachment_name = ?`, schema), a.id, a.name).Scan(&n)
				case a.table == "own_signatures": // a person's own signature of a talk: by talk and person
					err = conn.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.toolbox_users WHERE toolbox_id = ? AND user_id = ?`, schema), a.id, a.name).Scan(&n)
				case a.table == "induction_records": // the answer the writer gave, in the record's answers
					err = conn.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.induction_records WHERE id = ? AND instr(answers, ?) > 0`, schema), a.id, `"`+a.name+`"`).Scan(&n)
				case a.id == "": // keyed by the name alone (a signer's e-mail, a file's hash)
					err = conn.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.%s WHERE %s = ?`, schema, a.table, col), a.name).Scan(&n)
				default:
					err = conn.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.%s WHERE id = ? AND %s = ?`, schema, a.table, col), a.id, a.name).Scan(&n)
				}
				if err != nil {
					return err
				}
				if n == 0 {
					rep.lost++
					if len(rep.details) < 20 {
						rep.details = append(rep.details, fmt.Sprintf("lost: %s's %s %s (%s) is not in the %s's file", side, a.table, a.id, a.name, owner[schema]))
					}
				}
			}
		}
		// Duplicated: a name given once appearing twice, or a work item
		// number given twice.
		for _, q := range []string{
			`SELECT count(*) FROM (SELECT name FROM %s.projects WHERE name LIKE 'fault-%%' GROUP BY name HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT title FROM %s.work_items WHERE title LIKE 'fault-%%' GROUP BY title HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT log FROM %s.asset_logs WHERE log LIKE 'fault-%%' GROUP BY log HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT email FROM %s.toolbox_users WHERE email LIKE 'fault-%%' GROUP BY toolbox_id, email HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT attachment_name FROM %s.asset_logs WHERE attachment_name LIKE 'fault-%%' GROUP BY attachment_name HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT answers FROM %s.induction_records WHERE answers LIKE '%%"fault-%%' GROUP BY answers HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT w.object_id FROM %[1]s.witness_records w JOIN %[1]s.work_items i ON i.id = w.object_id WHERE i.title LIKE 'fault-%%' GROUP BY w.object_type, w.object_id, w.user_id HAVING count(*) > 1)`,
			// One person's records of one object from several offices:
			// the first (lowest id) unflagged, every other naming it.
			`SELECT count(*) FROM %[1]s.witness_records x WHERE x.duplicate_of IS NOT (SELECT CASE WHEN min(o.id) = x.id THEN NULL ELSE min(o.id) END FROM %[1]s.witness_records o WHERE o.object_type = x.object_type AND o.object_id = x.object_id AND o.user_id = x.user_id)`,
			// Likewise one person's own signatures of one talk, and a
			// talk a side made signed twice by one person.
			`SELECT count(*) FROM %[1]s.toolbox_users x WHERE x.user_id IS NOT NULL AND x.duplicate_of IS NOT (SELECT CASE WHEN min(o.id) = x.id THEN NULL ELSE min(o.id) END FROM %[1]s.toolbox_users o WHERE o.toolbox_id = x.toolbox_id AND o.user_id = x.user_id)`,
			`SELECT count(*) FROM (SELECT u.user_id FROM %[1]s.toolbox_users u JOIN %[1]s.toolboxes t ON t.id = u.toolbox_id WHERE t.title LIKE 'fault-%%' AND u.user_id IS NOT NULL GROUP BY u.toolbox_id, u.user_id HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT file_hash FROM %s.induction_revisions WHERE file_name LIKE 'fault-%%' GROUP BY induction_id, file_hash HAVING count(*) > 1)`,
			`SELECT count(*) FROM (SELECT number FROM %s.work_items GROUP BY organisation_id, coalesce(prefix_id, 0), number HAVING count(*) > 1)`,
		} {
			var n int
			if err := conn.QueryRow(fmt.Sprintf(q, schema)).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				rep.duplicated += n
				rep.details = append(rep.details, fmt.Sprintf("duplicated in %s: %d (%s)", schema, n, q))
			}
		}
		if schema == "main" {
			var n int
			var revs int
			var own int
			if err := conn.QueryRow(`SELECT count(*) FILTER (WHERE duplicate_of IS NOT NULL), count(*) FILTER (WHERE object_type = 'document_revision'), (SELECT count(*) FROM main.toolbox_users WHERE user_id IS NOT NULL AND duplicate_of IS NOT NULL) FROM main.witness_records`).Scan(&n, &revs, &own); err != nil {
				return err
			}
			rep.details = append(rep.details, fmt.Sprintf("witness records: %d of document revisions; %d flagged as a second office's record of one person and object; own talk signatures flagged so: %d", revs, n, own))
		}
		// Provisional numbers (a laptop out of blocks) are replaced by the
		// next exchanges: none may be left after the quiet one.
		var prov int
		if err := conn.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.work_items WHERE number < 0`, schema)).Scan(&prov); err != nil {
			return err
		}
		if prov > 0 {
			rep.provisional += prov
			rep.details = append(rep.details, fmt.Sprintf("provisional work item numbers left in %s: %d", schema, prov))
		}
		rows, err := conn.Query(fmt.Sprintf(`PRAGMA %s.integrity_check`, schema))
		if err != nil {
			return err
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return err
			}
			if s != "ok" {
				rep.integrity++
				rep.details = append(rep.details, fmt.Sprintf("integrity_check %s: %s", schema, s))
			}
		}
		rows.Close()
	}
	// Every replicated table, row for row, without its derived columns.
	names := make([]string, 0, len(db.SyncCatalogue))
	for name, p := range db.SyncCatalogue {
		if p.Policy == db.Replicated {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if ownRows[name] {
			continue
		}
		derived := map[string]bool{}
		for _, c := range db.SyncCatalogue[name].DerivedColumns {
			derived[c] = true
		}
		if db.SyncCatalogue[name].Objects {
			// Objects travel by their hash; a row id (document_chunks')
			// is each file's own rowid, named by nothing.
			derived["id"] = true
		}
		rows, err := conn.Query(`SELECT name FROM pragma_table_info(?)`, name)
		if err != nil {
			return err
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return err
			}
			if !derived[c] {
				cols = append(cols, `"`+c+`"`)
			}
		}
		rows.Close()
		if len(cols) == 0 {
			continue
		}
		list := strings.Join(cols, ", ")
		where := ""
		if name == "audit_log" {
			// An entry of a person's own action (no organisation: a TOTP
			// secret registered) stays on its node, like the row.
			where = " WHERE organisation_id IS NOT NULL"
		}
		// Each laptop against the hub: equal to it, they are equal to
		// one another.
		for _, site := range schemas[1:] {
			var a, b int
			if err := conn.QueryRow(fmt.Sprintf(`SELECT (SELECT count(*) FROM (SELECT %[1]s FROM main."%[2]s"%[3]s EXCEPT SELECT %[1]s FROM %[4]s."%[2]s"%[3]s)), (SELECT count(*) FROM (SELECT %[1]s FROM %[4]s."%[2]s"%[3]s EXCEPT SELECT %[1]s FROM main."%[2]s"%[3]s))`, list, name, where, site)).Scan(&a, &b); err != nil {
				return fmt.Errorf("compare %s: %w", name, err)
			}
			if a > 0 || b > 0 {
				rep.tablesDiffer++
				rep.details = append(rep.details, fmt.Sprintf("table %s differs: %d rows only on the hub, %d only on %s", name, a, b, owner[site]))
			}
		}
	}
	conn.Close()
	for _, p := range append([]string{hubPath}, sitePaths...) {
		store, err := db.Open(ctx, db.Options{Path: p, NodeID: -1})
		if err != nil {
			return err
		}
		problems, _, err := db.VerifyAudit(ctx, store.R)
		store.Close()
		if err != nil {
			return err
		}
		rep.auditFailures += len(problems)
		for _, pr := range problems {
			rep.details = append(rep.details, fmt.Sprintf("audit verify %s: %s", filepath.Base(p), pr))
		}
	}
	return nil
}

// proxy forwards the laptop's connections to the hub; while not quiet it
// drops, delays, cuts and resets them at random.
type proxy struct {
	ln     net.Listener
	target string
	quiet  atomic.Bool
	faults atomic.Int64
	mu     sync.Mutex
	rng    *rand.Rand
	live   map[net.Conn]bool // the laptop's side of each open link
}

// resetAll is the link going down: every open connection reset at once,
// whatever it was in the middle of.
func (p *proxy) resetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.live {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
		p.faults.Add(1)
	}
}

func newProxy(target string, seed uint64) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, rng: rand.New(rand.NewPCG(seed, 3)), live: map[net.Conn]bool{}}
	go p.serve()
	return p, nil
}

func (p *proxy) addr() string      { return p.ln.Addr().String() }
func (p *proxy) setQuiet(q bool)   { p.quiet.Store(q) }
func (p *proxy) close()            { p.ln.Close() }
func (p *proxy) intn(n int) int    { p.mu.Lock(); defer p.mu.Unlock(); return p.rng.IntN(n) }
func (p *proxy) fault(kind string) { p.faults.Add(1) }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

// handle picks a fate for one connection: most pass, some are dropped at
// once, delayed on every chunk, cut after some bytes or reset (RST).
func (p *proxy) handle(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	p.live[c] = true
	p.mu.Unlock()
	defer func() { p.mu.Lock(); delete(p.live, c); p.mu.Unlock() }()
	fate := "pass"
	if !p.quiet.Load() {
		switch k := p.intn(100); {
		case k < 8:
			fate = "drop"
		case k < 23:
			fate = "delay"
		case k < 38:
			fate = "cut"
		case k < 48:
			fate = "reset"
		}
	}
	if fate == "drop" {
		p.fault(fate)
		return
	}
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return // the hub is down (killed): the laptop sees a refused or closed link
	}
	defer up.Close()
	budget := int64(-1)
	if fate == "cut" || fate == "reset" {
		budget = int64(p.intn(64 << 10))
		p.fault(fate)
	}
	var delay time.Duration
	if fate == "delay" {
		delay = time.Duration(50+p.intn(500)) * time.Millisecond
		p.fault(fate)
	}
	var sent atomic.Int64
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		br := bufio.NewReader(src)
		buf := make([]byte, 16<<10)
		for {
			n, err := br.Read(buf)
			if n > 0 {
				if delay > 0 {
					time.Sleep(delay)
				}
				if budget >= 0 && sent.Add(int64(n)) > budget {
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	if fate == "reset" {
		// SO_LINGER 0: close sends RST, not FIN, on both sides.
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		if tc, ok := up.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// writeOffline appends n asset logs to the laptop's file through the store
// (so the change log captures each, as a request's write would), in
// transactions of 2,000, and returns them as acknowledged.
func writeOffline(path, orgID, assetID, email string, n int) ([]ack, error) {
	if assetID == "" {
		return nil, errors.New("no asset to log against")
	}
	ctx := context.Background()
	store, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var user int64
	if err := store.Reader.QueryRowContext(ctx, `SELECT id FROM users WHERE email = ?`, email).Scan(&user); err != nil {
		return nil, err
	}
	ids := db.NewIDGen(store.NodeID())
	at := db.FormatTime(time.Now())
	var out []ack
	for len(out) < n {
		var page []ack // kept only once its transaction committed
		err := store.InTxSQL(ctx, func(tx *sql.Tx, _ *db.Queries) error {
			page = page[:0]
			st, err := tx.PrepareContext(ctx, `INSERT INTO asset_logs (id, organisation_id, asset_group_id, type, log, log_hash, logged_at, created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, 'comment', ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer st.Close()
			for k := 0; k < 2000 && len(out)+len(page) < n; k++ {
				id := ids.Next()
				text := fmt.Sprintf("fault-offline-l%d: daily inspection done", len(out)+len(page))
				sum := sha256.Sum256([]byte(text))
				if _, err := st.ExecContext(ctx, id, orgID, assetID, text, hex.EncodeToString(sum[:]), at, at, user, at, user); err != nil {
					return err
				}
				page = append(page, ack{"asset_logs", strconv.FormatInt(id, 10), text})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
	}
	return out, nil
}

// byKind counts acknowledged writes by table, in the table's order.
func byKind(list []ack) string {
	n := map[string]int{}
	for _, a := range list {
		n[a.table]++
	}
	kinds := make([]string, 0, len(n))
	for k := range n {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, n[k])
	}
	return strings.Join(kinds, ", ")
}
