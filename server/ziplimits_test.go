package server

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"workspace/server/render"
)

// xlsxParts is a minimal workbook around one sheet's XML (and shared
// strings when given); extra names more entries.
func xlsxParts(sheet, shared string) map[string]string {
	parts := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
			`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml": `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
			`<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
		"xl/worksheets/sheet1.xml": sheet,
	}
	if shared != "" {
		parts["xl/sharedStrings.xml"] = shared
	}
	return parts
}

const sheetHead = `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
const sheetTail = `</sheetData></worksheet>`

// bombEntry is one entry written raw: its content is generated (so a
// gigabyte never sits in memory) and declared overrides the size the
// header states (0: the true size).
type bombEntry struct {
	name     string
	write    gen
	declared uint64
}

// gen is an entry's content: head, n copies of unit, then tail.
type gen struct {
	head, unit string
	n          int
	tail       string
}

// repeat is the content head, n copies of unit, tail.
func repeat(head, unit string, n int, tail string) gen { return gen{head, unit, n, tail} }

// deflate compresses g without compressing all of it: a block of copies is
// deflated once, on its own, and its bytes repeated. A deflate segment
// begun afresh and ended by a sync flush refers only to its own output, so
// segments join into one stream. Deflating every byte cost 100 s of the
// suite's race run (47 s for the gigabyte of styles): time spent making
// the bombs, not proving the server refuses them.
func (g gen) deflate(fast, best *flate.Writer) (comp []byte, crc uint32, size uint64) {
	var out bytes.Buffer
	h := crc32.NewIEEE()
	// segment deflates s afresh; final ends the stream, else a sync flush
	// ends the segment. The best level is for the repeated block only: its
	// Reset clears tables a thousand-entry bomb cannot afford per entry.
	segment := func(fw *flate.Writer, s string, final bool) []byte {
		var b bytes.Buffer
		fw.Reset(&b)
		_, _ = io.WriteString(fw, s)
		if final {
			_ = fw.Close()
		} else {
			_ = fw.Flush()
		}
		return b.Bytes()
	}
	put := func(fw *flate.Writer, s string, times int) {
		if s == "" {
			return
		}
		c := segment(fw, s, false)
		for range times {
			out.Write(c)
			_, _ = io.WriteString(h, s)
			size += uint64(len(s))
		}
	}
	put(fast, g.head, 1)
	if g.n > 0 && g.unit != "" {
		per := min(g.n, max(1, (1<<20)/len(g.unit))) // copies in a block of about 1 MiB
		put(best, strings.Repeat(g.unit, per), g.n/per)
		put(fast, strings.Repeat(g.unit, g.n%per), 1)
	}
	out.Write(segment(fast, g.tail, true))
	_, _ = io.WriteString(h, g.tail)
	size += uint64(len(g.tail))
	return out.Bytes(), h.Sum32(), size
}

// zipBytes writes each entry with the header asked for, its true size and
// checksum worked out as it is deflated.
func zipBytes(t testing.TB, entries []bombEntry) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	fast, _ := flate.NewWriter(nil, flate.BestSpeed)
	best, _ := flate.NewWriter(nil, flate.BestCompression)
	for _, e := range entries {
		comp, crc, size := e.write.deflate(fast, best)
		if e.declared != 0 {
			size = e.declared
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Deflate, CRC32: crc,
			CompressedSize64: uint64(len(comp)), UncompressedSize64: size})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(comp)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func entriesOf(parts map[string]string) []bombEntry {
	var es []bombEntry
	for name, body := range parts {
		es = append(es, bombEntry{name: name, write: gen{head: body}})
	}
	return es
}

// withSheet is a workbook whose sheet (and optionally shared strings) is
// generated, with extra entries appended.
func withSheet(sheet bombEntry, extra ...bombEntry) []bombEntry {
	var es []bombEntry
	for _, e := range entriesOf(xlsxParts("", "")) {
		if e.name != "xl/worksheets/sheet1.xml" {
			es = append(es, e)
		}
	}
	return append(append(es, sheet), extra...)
}

// peakRSSGrowth runs fn and answers how far the process's peak resident
// set rose above what it held before (Linux: writing 5 to clear_refs
// resets the peak), after returning freed memory to the system.
func peakRSSGrowth(fn func()) (uint64, bool) {
	runtime.GC()
	debug.FreeOSMemory()
	before := procStatus("VmRSS:")
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil || before == 0 {
		fn()
		return 0, false
	}
	fn()
	peak := procStatus("VmHWM:")
	if peak < before {
		return 0, true
	}
	return peak - before, true
}

// procStatus reads one kB figure of /proc/self/status, in bytes.
func procStatus(key string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestXLSXImportBombs: an upload up to the body limit that inflates to
// far more is refused having allocated less than 64 MB and spent less
// than 2 s of CPU (issue 35): rows past the limit stop the stream, an
// entry declaring too much is refused before it is inflated, an entry
// whose header lies stops at its declared size, and so on.
// It measures the whole process (CPU, peak RSS), so it must not call
// t.Parallel: serial tests run while no parallel test does.
func TestXLSXImportBombs(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice")
	imp := "/organisations/" + e.org(alice, "Acme") + "/assets/import"
	row := func(i int) string { return `<row><c t="inlineStr"><is><t>Truck</t></is></c></row>` }
	rowsUnit := row(0)

	cases := []struct {
		name    string
		entries []bombEntry
		status  int
		message string
	}{
		{"a million rows, streamed and stopped at the limit",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 800_000, sheetTail)}),
			400, "more than 50,000 rows"},
		{"a million rows after a gap of empty ones",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead+rowsUnit+`<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>x</t></is></c></row>`, "", 0, sheetTail)}),
			400, "more than 50,000 rows"},
		{"a sheet declaring 16 GiB",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 10_000, sheetTail), declared: 16 << 30}),
			400, "unpacks to more than"},
		{"a sheet of 200 MiB (declared truly)",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 200<<20/len(rowsUnit), sheetTail)}),
			400, "unpacks to more than"},
		{"a sheet whose header declares 1 KiB of 100 MiB",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 100<<20/len(rowsUnit), sheetTail), declared: 1024}),
			400, "not a readable XLSX"},
		{"shared strings of 200 MiB",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, `<row><c t="s"><v>0</v></c></row>`, 10, sheetTail)},
				bombEntry{name: "xl/sharedStrings.xml", write: repeat(`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`, `<si><t>a</t></si>`, 200<<20/17, `</sst>`)}),
			400, "unpacks to more than"},
		{"shared strings under their byte bound, one letter each",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, `<row><c t="s"><v>0</v></c></row>`, 10, sheetTail)},
				bombEntry{name: "xl/sharedStrings.xml", write: repeat(`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`, `<si><t>a</t></si>`, (8<<20-200)/17, `</sst>`)}),
			400, "more than 200,000 different texts"},
		{"as many shared strings as allowed, then rows to the limit",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, `<row><c t="s"><v>199999</v></c><c t="s"><v>7</v></c></row>`, 60_000, sheetTail)},
				bombEntry{name: "xl/sharedStrings.xml", write: repeat(`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`, `<si><t>a</t></si>`, maxSharedStrings, `</sst>`)}),
			400, "more than 50,000 rows"},
		{"styles of 1 GiB",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 10, sheetTail)},
				bombEntry{name: "xl/styles.xml", write: repeat(`<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`, " ", 1<<30, `</styleSheet>`)}),
			400, "unpacks to more than"},
		{"many sheets under the bound each",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 10, sheetTail)},
				func() []bombEntry {
					var es []bombEntry
					for i := 2; i < 8; i++ {
						es = append(es, bombEntry{name: fmt.Sprintf("xl/worksheets/sheet%d.xml", i), write: repeat(sheetHead, rowsUnit, 40<<20/len(rowsUnit), sheetTail)})
					}
					return es
				}()...),
			400, "unpacks to more than"},
		{"thousands of entries",
			withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, rowsUnit, 10, sheetTail)},
				func() []bombEntry {
					var es []bombEntry
					for i := 0; i < 170_000; i++ {
						es = append(es, bombEntry{name: fmt.Sprintf("x/%d", i)})
					}
					return es
				}()...),
			400, "more than 1000 parts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := zipBytes(t, c.entries)
			if len(data) > maxImportBytes {
				t.Fatalf("the bomb is %d bytes, over the body limit", len(data))
			}
			req := multipartReq(t, alice, "POST", imp, nil, map[string][]byte{"file": data})
			req = req.WithContext(context.WithValue(req.Context(), routeKey{}, &routeSlot{pattern: "unmatched"}))
			rec := httptest.NewRecorder()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var cpu time.Duration
			peak, measured := peakRSSGrowth(func() {
				cpu = cpuTime()
				e.srv.ServeHTTP(rec, req)
				cpu = cpuTime() - cpu
			})
			spent := cpu
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d KB upload: %d, peak RSS +%.1f MB, %.1f MB allocated in all, %v CPU: %.200s", len(data)>>10, rec.Code,
				float64(peak)/1e6, float64(alloc)/1e6, spent, rec.Body.Bytes())
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.message) {
				t.Fatalf("%d %s, want %d with %q", rec.Code, rec.Body.Bytes(), c.status, c.message)
			}
			// The process's peak resident memory while the request ran,
			// over what it held before: what the server pays.
			// Under -race the detector's shadow memory of every heap page
			// touched for the first time counts too: with the bombs made a
			// block at a time (little heap touched before), the same import
			// (266 MB allocated) grew RSS by 53-80 MB under -race, 40-54 MB
			// when the bombs' making had touched more first; 37 MB without.
			rssBound := uint64(64 << 20)
			if raceEnabled {
				rssBound *= 2
			}
			if !measured {
				t.Log("peak RSS not measurable here (/proc/self/clear_refs); the allocation bound below stands in")
			} else if peak > rssBound {
				t.Errorf("peak memory grew by %.1f MB, want under %d MB", float64(peak)/1e6, rssBound>>20)
			}
			// Everything allocated, garbage included, bounds the work.
			if alloc > 384<<20 {
				t.Errorf("allocated %.1f MB in all, want under 384 MB", float64(alloc)/1e6)
			}
			// CPU time of the whole process while the request ran (no
			// wall clock): the bound the issue sets, with room for the
			// collector's own work on a shared machine.
			cpuBound := 2 * time.Second
			if raceEnabled {
				cpuBound *= 5 // the detector's instrumentation, not the import's work
			}
			if spent > cpuBound {
				t.Errorf("spent %v of CPU, want under %v", spent, cpuBound)
			}
		})
	}
}

// TestZipLimitsRefuseLyingEntries: readZipFile counts what it inflates.
func TestZipLimitsRefuseLyingEntries(t *testing.T) {
	t.Parallel()
	lim := render.ZipLimits{Entries: 10, EntryBytes: 1 << 20, TotalBytes: 2 << 20}
	data := zipBytes(t, []bombEntry{
		{name: "small", write: repeat("", "a", 1000, "")},
		{name: "liar", write: repeat("", "a", 50<<20, ""), declared: 1000},
	})
	zr, err := render.OpenZip(data, lim)
	if err != nil {
		t.Fatalf("declared sizes are within the limits: %v", err)
	}
	if b, err := render.ReadZipFile(zr.File[0], lim); err != nil || len(b) != 1000 {
		t.Fatalf("small entry: %d bytes, %v", len(b), err)
	}
	if b, err := render.ReadZipFile(zr.File[1], lim); err == nil || len(b) > 0 {
		t.Fatalf("the lying entry was read (%d bytes)", len(b))
	}
	// And one that declares its size truly is refused before inflating.
	if _, err := render.OpenZip(zipBytes(t, []bombEntry{{name: "big", write: repeat("", "a", 2<<20, "")}}), lim); err == nil {
		t.Fatal("an entry over the bound was opened")
	}
	if _, err := render.OpenZip([]byte("not a zip"), lim); err != render.ErrNotZip {
		t.Fatalf("not a zip: %v", err)
	}
	// Where the limit stops a read that the header allowed (a writer
	// that declares the limit exactly and writes more).
	data = zipBytes(t, []bombEntry{{name: "x", write: repeat("", "a", 3<<20, ""), declared: 1 << 20}})
	zr, _ = render.OpenZip(data, lim)
	if _, err := render.ReadZipFile(zr.File[0], lim); err == nil {
		t.Fatal("read past the declared size")
	}
}

// TestReadSheetRowLimit: 50,000 rows after the header are read, one more
// is refused, in XLSX (streamed, with empty rows between counted only
// when data follows) and in CSV.
func TestReadSheetRowLimit(t *testing.T) {
	t.Parallel()
	row := `<row><c t="inlineStr"><is><t>Truck</t></is></c></row>`
	for _, c := range []struct {
		name string
		rows int
		tail string
		want int // rows read; 0: refused
	}{
		{"header and 50,000 rows", maxImportRows + 1, "", maxImportRows + 1},
		{"one more", maxImportRows + 2, "", 0},
		{"empty rows after the data do not count", maxImportRows + 1, `<row r="900000"><c r="A900000" s="1"/></row>`, maxImportRows + 1},
		{"data after a gap counts the gap", 10, `<row r="60000"><c r="A60000" t="inlineStr"><is><t>x</t></is></c></row>`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := zipBytes(t, withSheet(bombEntry{name: "xl/worksheets/sheet1.xml", write: repeat(sheetHead, row, c.rows, c.tail+sheetTail)}))
			rows, err := readXLSX(data)
			if c.want == 0 {
				if err == nil || !strings.Contains(err.Error(), "more than 50,000 rows") {
					t.Fatalf("read %d rows, err %v; want the row limit", len(rows), err)
				}
				return
			}
			if err != nil || len(rows) != c.want || rows[len(rows)-1][0] != "Truck" {
				t.Fatalf("read %d rows, err %v; want %d", len(rows), err, c.want)
			}
		})
	}
	for _, n := range []int{maxImportRows, maxImportRows + 1} {
		body := "number,name\n" + strings.Repeat(",Truck\n", n)
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/csv")
		rows, err := readSheet(req)
		if refused := err != nil; refused != (n > maxImportRows) || (err == nil && len(rows) != n+1) {
			t.Fatalf("CSV of %d rows: %d read, %v", n, len(rows), err)
		}
	}
}
