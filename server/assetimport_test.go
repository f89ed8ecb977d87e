package server

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"workspace/server/render"

	"github.com/xuri/excelize/v2"
)

// importReq posts a file to the import endpoint.
func (e *testEnv) importFile(u *testUser, path string, body []byte, contentType string) *testResponse {
	req := httptest.NewRequest("POST", path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if u != nil {
		req.Header.Set("Authorization", "Bearer "+e.bearer(u))
	}
	return e.serve(req)
}

func TestAssetImportExport(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	imp := acme + "/assets/import"
	existing := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "Old name"}).obj(t) // TR-001
	csvOf := func(rows ...string) []byte { return []byte(strings.Join(rows, "\n") + "\n") }
	good := csvOf(
		"number,name,type,status,fleet,location,active,Mileage,Fuel",
		"TR-001,Renamed,,Live,,Depot,true,100,diesel",
		",New truck,Truck,,,,,5,petrol",
		"TR-020,Numbered,Truck,,,,,,",
		`,"=HYPERLINK(""x"")",Trailer,,,,false,,`,
	)
	bad := csvOf(
		"number,name,type,Mileage,Fuel",
		",Fine,Truck,1,diesel",
		",Bad,Truck,lots,coal",
		",No type,,,",
		",Unknown type,Boat,,",
	)
	cases := []struct {
		name  string
		as    *testUser
		path  string
		body  []byte
		ct    string
		want  int
		check func(t *testing.T, r *testResponse)
	}{
		{"member without MANAGE_FLEETS", f.bob, imp, good, "text/csv", 403, nil},
		{"other organisation", f.mallory, imp, good, "text/csv", 403, nil},
		{"absent organisation", f.alice, "/organisations/123456789/assets/import", good, "text/csv", 400, nil},
		{"unknown column", f.alice, imp, csvOf("number,colour", "TR-001,red"), "text/csv", 400, wantField("header")},
		{"empty file", f.alice, imp, []byte(""), "text/csv", 400, nil},
		{"not a workbook", f.alice, imp, []byte("PK\x03\x04garbage"), "text/csv", 400, nil},
		{"invalid rows: nothing written, row by row report", f.alice, imp, bad, "text/csv", 400, func(t *testing.T, r *testResponse) {
			rep := r.obj(t)["report"].(map[string]any)
			rows := rep["rows"].([]any)
			if rep["invalid"] != float64(3) || len(rows) != 4 || rows[0].(map[string]any)["action"] != "create" {
				t.Fatalf("report %v", rep)
			}
			errs := rows[1].(map[string]any)["errors"].(map[string]any)
			if errs["mileage"] == nil || errs["fuel"] == nil {
				t.Errorf("row 3 errors %v", errs)
			}
			if rows[2].(map[string]any)["errors"].(map[string]any)["type"] == nil || rows[3].(map[string]any)["errors"].(map[string]any)["type"] == nil {
				t.Errorf("rows %v", rows)
			}
		}},
		{"nothing was written", f.alice, "GET", nil, "", 0, nil},
		{"dry run reports and writes nothing", f.alice, imp + "?dry_run=true", good, "text/csv", 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["applied"] != false || o["created"] != float64(3) || o["updated"] != float64(1) {
				t.Errorf("report %v", o)
			}
		}},
		{"import", f.alice, imp, good, "text/csv", 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			rows := o["rows"].([]any)
			if o["applied"] != true || rows[0].(map[string]any)["action"] != "update" || rows[1].(map[string]any)["number"] != "TR-002" ||
				rows[2].(map[string]any)["number"] != "TR-020" {
				t.Errorf("report %v", o)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.path == "GET" {
				if n := len(e.must(200, f.alice, "GET", acme+"/assets", nil).arr(t)); n != 1 {
					t.Fatalf("%d assets after refused imports, want 1", n)
				}
				return
			}
			r := e.importFile(c.as, c.path, c.body, c.ct)
			if r.Status != c.want {
				t.Fatalf("status %d, want %d: %s", r.Status, c.want, r.Body)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
	old := e.must(200, f.alice, "GET", "/api/assets/"+existing["id"].(string), nil).obj(t)
	if old["name"] != "Renamed" || old["status"].(map[string]any)["name"] != "Live" || old["fields"].(map[string]any)[f.mileage].(map[string]any)["value"] != float64(100) {
		t.Fatalf("upserted %v", old)
	}
	// Export: CSV with formula-safe cells, and XLSX with the same rows.
	r := e.must(200, f.alice, "GET", acme+"/assets/export.csv", nil)
	if !bytes.HasPrefix(r.Body, []byte(render.CSVBOM)) || !bytes.HasSuffix(r.Body, []byte("\r\n")) {
		t.Fatalf("csv without BOM or CRLF: %q", r.Body)
	}
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(r.Body, []byte(render.CSVBOM)))).ReadAll()
	if err != nil || len(recs) != 5 || recs[0][0] != "number" {
		t.Fatalf("csv %v %v", recs, err)
	}
	var formula bool
	for _, rec := range recs {
		if rec[1] == `'=HYPERLINK("x")` {
			formula = true
		}
	}
	if !formula {
		t.Errorf("formula cell not escaped: %v", recs)
	}
	x := e.must(200, f.alice, "GET", acme+"/assets/export.xlsx", nil)
	wb, err := excelize.OpenReader(bytes.NewReader(x.Body))
	if err != nil {
		t.Fatal(err)
	}
	xrows, _ := wb.GetRows("Assets")
	if len(xrows) != 5 || xrows[1][1] != `=HYPERLINK("x")` {
		t.Fatalf("xlsx rows %v", xrows)
	}
	checkXLSXLayout(t, x.Body, wb, "Assets", map[string]string{"B2": "text", "I2": "bool", "K3": "number"})
	e.run(t, []scenario{
		{"member exports", f.bob, "GET", acme + "/assets/export.csv", nil, 200, nil},
		{"other organisation cannot export", f.mallory, "GET", acme + "/assets/export.csv", nil, 403, nil},
		{"other organisation cannot export xlsx", f.mallory, "GET", acme + "/assets/export.xlsx", nil, 403, nil},
	})
	// The export imports back unchanged (an XLSX upload, multipart).
	back := e.serve(multipartReq(t, f.alice, "POST", imp, nil, map[string][]byte{"file": x.Body}))
	if back.Status != 200 || back.obj(t)["updated"] != float64(4) {
		t.Fatalf("re-import: %d %s", back.Status, back.Body)
	}
	if n := len(e.must(200, f.alice, "GET", acme+"/assets", nil).arr(t)); n != 4 {
		t.Fatalf("%d assets after re-import, want 4", n)
	}
}

// BenchmarkAssetImport10k imports 10,000 new assets in one request
// (README: performance).
func BenchmarkAssetImport10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		alice := e.user("alice")
		acme := "/organisations/" + e.org(alice, "Acme")
		prefix := e.must(201, alice, "POST", acme+"/prefixes", map[string]any{"number_format": "TR-{number}"}).obj(b)["id"]
		e.must(201, alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "name": "Truck", "prefix_id": prefix})
		e.must(201, alice, "POST", acme+"/asset-statuses", map[string]any{"name": "Live"})
		var buf bytes.Buffer
		buf.WriteString("number,name,type,status\n")
		for n := 0; n < 10_000; n++ {
			fmt.Fprintf(&buf, ",Truck %d,Truck,Live\n", n)
		}
		b.StartTimer()
		start := time.Now()
		r := e.serve(multipartReq(b, alice, "POST", acme+"/assets/import", nil, map[string][]byte{"file": buf.Bytes()}))
		if r.Status != 200 {
			b.Fatalf("import: %d %.300s", r.Status, r.Body)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/import")
	}
}

// TestAssetImportYesNo: an import's yes/no cells take the words people
// write in a spreadsheet (issue 29: "yes" was refused), and refuse others
// by saying what they take.
func TestAssetImportYesNo(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	imp := acme + "/assets/import"
	rows := []string{"name,type,active"}
	want := map[string]bool{}
	for i, v := range []string{"yes", "No", "Y", "n", "TRUE", "false", "1", "0", " yes "} {
		name := fmt.Sprintf("Truck %d", i)
		rows = append(rows, name+",Truck,"+v)
		want[name] = map[string]bool{"yes": true, "y": true, "true": true, "1": true}[strings.ToLower(strings.TrimSpace(v))]
	}
	body := []byte(strings.Join(rows, "\n") + "\n")
	if r := e.importFile(f.mallory, imp, body, "text/csv"); r.Status != 403 {
		t.Fatalf("another organisation's member imported: %d", r.Status)
	}
	r := e.importFile(f.alice, imp+"?dry_run=true", []byte("name,type,active\nOdd,Truck,maybe\n"), "text/csv")
	if r.Status != 400 {
		t.Fatalf("maybe: status %d", r.Status)
	}
	errs := r.obj(t)["report"].(map[string]any)["rows"].([]any)[0].(map[string]any)["errors"].(map[string]any)
	if msg, _ := errs["active"].(string); !strings.Contains(msg, "yes or no") {
		t.Errorf("maybe: errors %v", errs)
	}
	if r := e.importFile(f.alice, imp, body, "text/csv"); r.Status != 200 {
		t.Fatalf("import: status %d: %s", r.Status, r.Body)
	}
	list := e.must(200, f.alice, "GET", acme+"/assets?$top=100", nil).arr(t)
	if len(list) != len(want) {
		t.Fatalf("%d assets, want %d", len(list), len(want))
	}
	for _, a := range list {
		if a["active"] != want[a["name"].(string)] {
			t.Errorf("%s active = %v, want %v", a["name"], a["active"], want[a["name"].(string)])
		}
	}
}
