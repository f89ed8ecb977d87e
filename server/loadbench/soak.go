package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The soak (issue 35): a fixed, mixed request rate held for a long time,
// the server's memory and p99 sampled every interval. Open loop: request
// n is due at start + n/rate whatever the server does, and its latency
// counts from when it was due, so a server falling behind shows as
// latency instead of as a lower rate.
//
// The mix, per 100 requests: 55 reads of a project, 20 filtered list
// pages, 15 project creates into the listed organisation (so it grows as
// in production, unlike the throughput rounds), 7 cell edits of the
// document and 3 logo uploads (a 16 KB PNG, multipart).

type soakConfig struct {
	duration, every time.Duration
	rate, conns     int
	profileDir      string
	metricsAddr     string
	maxGrowth       float64 // memory at the end over the baseline sample, as a fraction (0.2)
}

type soakKind int

const (
	soakGet soakKind = iota
	soakList
	soakCreate
	soakEdit
	soakUpload
)

var soakKindNamesArr = [...]string{"get", "list", "create", "cell edit", "upload"}
var soakKindNames = soakKindNamesArr[:]

// soakMix is the kinds of 100 consecutive requests, interleaved so any
// window of the run sees the whole mix.
var soakMix = func() []soakKind {
	counts := []int{55, 20, 15, 7, 3}
	mix := make([]soakKind, 0, 100)
	for i := 0; i < 100; i++ {
		// The kind furthest behind its share so far goes next.
		best, bestLag := 0, -1.0
		for k, n := range counts {
			had := 0
			for _, m := range mix {
				if int(m) == k {
					had++
				}
			}
			if lag := float64(n)*float64(i+1)/100 - float64(had); lag > bestLag {
				best, bestLag = k, lag
			}
		}
		mix = append(mix, soakKind(best))
	}
	return mix
}()

type soakSample struct {
	at       time.Duration
	requests int
	errors   int64
	p50, p99 time.Duration
	rssKB    int64
	projects int64
	cpu      float64 // the server's CPU µs per request answered in the interval
}

type soakJob struct {
	n   int
	due time.Time
}

func soak(host string, pid int, fx *fixture, doc *document, seeded int, cfg soakConfig) error {
	if doc == nil {
		return fmt.Errorf("the soak edits a document: -clauses must be above 0")
	}
	logo, err := soakLogo()
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		window   []time.Duration                        // latencies since the last sample
		byKind   [len(soakKindNamesArr)][]time.Duration // the same by kind
		errs     atomic.Int64
		firstErr atomic.Value
		created  atomic.Int64
		late     atomic.Int64 // jobs dropped because every connection was busy
	)
	fail := func(err error) {
		errs.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	bases := make([]string, cfg.conns)
	edits := make([]int, cfg.conns)
	// Each connection edits its own clauses, on the revision its previous
	// edit made: others' edits merge in, and no two edit one cell at once
	// (that is a real conflict, 409).
	perConn := max(len(doc.clauses)/cfg.conns, 1)
	build := func(w int, job soakJob) (req []byte, want int, kind soakKind) {
		i := job.n
		kind = soakMix[i%len(soakMix)]
		tok := fx.tokens[(w+i)%len(fx.tokens)]
		switch kind {
		case soakGet:
			return rawRequest("GET", host, "/projects/"+fx.projects[(i*7919)%len(fx.projects)], tok, nil), 200, kind
		case soakList:
			q := url.Values{"$filter": {"status eq 'open'"}, "$top": {"50"}, "$skip": {strconv.Itoa((i * 50) % 5000)}}
			return rawRequest("GET", host, "/organisations/"+fx.org+"/projects?"+q.Encode(), tok, nil), 200, kind
		case soakCreate:
			body := fmt.Sprintf(`{"name":"soak %d","code":"S%d"}`, i, i)
			return rawRequest("POST", host, "/organisations/"+fx.org+"/projects", tok, []byte(body)), 201, kind
		case soakEdit:
			if bases[w] == "" {
				bases[w] = doc.head
			}
			cl := doc.clauses[(w+cfg.conns*(edits[w]%perConn))%len(doc.clauses)]
			edits[w]++
			body := fmt.Sprintf(`{"clause_id":%q,"column_id":%q,"value":"soak %d"}`, cl, doc.column, i)
			return rawRequest("PATCH", host, "/documents/"+doc.id+"/revisions/"+bases[w]+"/fields", doc.token, []byte(body)), 200, kind
		default:
			return rawRequestType("PUT", host, "/organisations/"+fx.writeOrg+"/logo", fx.owner, logo.contentType, logo.body), 200, kind
		}
	}

	// Requests due while every connection is busy wait (their latency
	// counts from when they were due); a backlog of more than five
	// seconds of them is an error: the rate is not held.
	jobs := make(chan soakJob, 5*cfg.rate)
	var wg sync.WaitGroup
	for w := 0; w < cfg.conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rc *rawConn
			for job := range jobs {
				if rc == nil {
					c, err := net.Dial("tcp", host)
					if err != nil {
						fail(err)
						continue
					}
					rc = &rawConn{c: c, br: bufio.NewReaderSize(c, 64<<10)}
				}
				req, want, kind := build(w, job)
				status, body, err := rc.roundTrip(req, kind == soakEdit)
				if err != nil {
					rc.c.Close()
					rc = nil
					fail(fmt.Errorf("%s: %w", soakKindNames[kind], err))
					continue
				}
				if status != want {
					fail(fmt.Errorf("%s: status %d, want %d", soakKindNames[kind], status, want))
					continue
				}
				took := time.Since(job.due)
				if kind == soakEdit {
					var out struct{ Hash string }
					if json.Unmarshal(body, &out) == nil && out.Hash != "" {
						bases[w] = out.Hash
					}
				}
				if kind == soakCreate {
					created.Add(1)
				}
				mu.Lock()
				window = append(window, took)
				byKind[kind] = append(byKind[kind], took)
				mu.Unlock()
			}
			if rc != nil {
				rc.c.Close()
			}
		}()
	}

	fmt.Printf("soak: %d req/s for %s (55%% get, 20%% filtered list, 15%% create, 7%% cell edit, 3%% upload), %d connections, sampled every %s\n",
		cfg.rate, cfg.duration, cfg.conns, cfg.every)
	fmt.Printf("%8s %9s %7s %9s %9s %9s %9s %8s   p99 by kind: %s\n", "time", "requests", "errors", "p50", "p99", "RSS MB", "projects", "cpu µs", strings.Join(soakKindNames, " / "))
	var samples []soakSample
	start := time.Now()
	sampled := make(chan struct{})
	go func() {
		// Samples at every interval up to the end, the last at the end.
		defer close(sampled)
		ticks := procTicks(pid)
		for k := 1; time.Duration(k)*cfg.every <= cfg.duration; k++ {
			time.Sleep(time.Until(start.Add(time.Duration(k) * cfg.every)))
			mu.Lock()
			lat := window
			window = nil
			var kinds []string
			for k := range byKind {
				_, p99 := percentiles(byKind[k])
				kinds = append(kinds, p99.String())
				byKind[k] = nil
			}
			mu.Unlock()
			s := soakSample{at: time.Duration(k) * cfg.every, requests: len(lat), errors: errs.Load(),
				projects: int64(seeded) + created.Load()}
			s.p50, s.p99 = percentiles(lat)
			s.rssKB, _ = procStatusKB(pid, "VmRSS:")
			now := procTicks(pid)
			if len(lat) > 0 {
				s.cpu = float64(now-ticks) * 1e6 / clockTicks / float64(len(lat))
			}
			ticks = now
			samples = append(samples, s)
			fmt.Printf("%8s %9d %7d %9s %9s %9.1f %9d %8.0f   %s\n", s.at, s.requests, s.errors, s.p50, s.p99, float64(s.rssKB)/1024, s.projects, s.cpu, strings.Join(kinds, " / "))
			// A CPU profile of the server over the interval after the first
			// minute and the last one (-profile): where a request's time goes
			// as the organisation grows.
			if cfg.profileDir != "" && (s.at == min(time.Minute, cfg.duration/3) || s.at == cfg.duration-cfg.every) {
				name := filepath.Join(cfg.profileDir, fmt.Sprintf("soak-%s.prof", s.at+cfg.every))
				go func() {
					if err := cpuProfile(cfg.metricsAddr, cfg.every, name); err != nil {
						fmt.Fprintln(os.Stderr, "profile:", err)
					}
				}()
			}
		}
	}()
	interval := time.Second / time.Duration(cfg.rate)
	for n := 0; ; n++ {
		due := start.Add(time.Duration(n) * interval)
		if due.Sub(start) >= cfg.duration {
			break
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		select {
		case jobs <- soakJob{n: n, due: due}:
		default:
			late.Add(1)
			fail(fmt.Errorf("request %d: more than 5 s of requests waiting for a connection", n))
		}
	}
	close(jobs)
	wg.Wait()
	<-sampled
	return soakVerdict(samples, errs.Load(), firstErr.Load(), late.Load(), cfg)
}

// soakVerdict prints the summary and fails on an error or on memory
// growth over the target: the end within maxGrowth of the baseline, the
// sample after the first minute (a third of a shorter run).
func soakVerdict(samples []soakSample, errs int64, firstErr any, late int64, cfg soakConfig) error {
	if len(samples) < 2 {
		return fmt.Errorf("soak too short to judge: %d samples", len(samples))
	}
	base := samples[0]
	baseAt := min(time.Minute, cfg.duration/3)
	for _, s := range samples {
		if s.at <= baseAt {
			base = s
		}
	}
	end := samples[len(samples)-1]
	growth := float64(end.rssKB)/float64(base.rssKB) - 1
	var p99s []time.Duration
	for _, s := range samples {
		p99s = append(p99s, s.p99)
	}
	sorted := append([]time.Duration(nil), p99s...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	fmt.Printf("\nerrors %d (of which %d requests found 5 s of others waiting)", errs, late)
	if firstErr != nil {
		fmt.Printf("; the first: %v", firstErr)
	}
	fmt.Printf("\nmemory: %.1f MB at %s, %.1f MB at the end: %+.1f%% (target within %.0f%%)\n",
		float64(base.rssKB)/1024, base.at, float64(end.rssKB)/1024, 100*growth, 100*cfg.maxGrowth)
	fmt.Printf("p99 per sample: first %s (after %s: %s), last %s, median %s, highest %s\n",
		p99s[0], base.at, base.p99, end.p99, sorted[len(sorted)/2], sorted[len(sorted)-1])
	fmt.Printf("%s, GOMAXPROCS %d\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOMAXPROCS(0))
	var problems []string
	if errs > 0 {
		problems = append(problems, fmt.Sprintf("%d errors", errs))
	}
	if growth > cfg.maxGrowth {
		problems = append(problems, fmt.Sprintf("memory grew %.1f%%, over %.0f%%", 100*growth, 100*cfg.maxGrowth))
	}
	if len(problems) > 0 {
		return fmt.Errorf("soak failed: %s", strings.Join(problems, "; "))
	}
	return nil
}

func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)*50/100].Round(10 * time.Microsecond), lat[len(lat)*99/100].Round(10 * time.Microsecond)
}

// procStatusKB reads one kB figure of /proc/PID/status.
func procStatusKB(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s", key)
}

type upload struct {
	contentType string
	body        []byte
}

// soakLogo is a multipart body holding a 64x64 PNG of noise (about 16 KB:
// it does not compress).
func soakLogo() (upload, error) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	x := uint32(1)
	for i := range img.Pix {
		x = x*1664525 + 1013904223
		img.Pix[i] = byte(x >> 24)
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		return upload{}, err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "logo.png")
	if err != nil {
		return upload{}, err
	}
	_, _ = fw.Write(pngBuf.Bytes())
	if err := mw.Close(); err != nil {
		return upload{}, err
	}
	return upload{contentType: mw.FormDataContentType(), body: body.Bytes()}, nil
}

func rawRequestType(method, host, path, token, contentType string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		method, path, host, token, contentType, len(body))
	b.Write(body)
	return b.Bytes()
}
