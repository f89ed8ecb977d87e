package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

func TestOrganisationImages(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	img := pngBytes(t, 64, 48)
	put := func(u *testUser, kind string, data []byte) *testResponse {
		return e.serve(multipartReq(t, u, "PUT", acme+"/"+kind, nil, map[string][]byte{"file": data}))
	}
	for _, kind := range []string{"icon", "banner", "logo"} {
		t.Run(kind, func(t *testing.T) {
			if r := put(f.bob, kind, img); r.Status != 403 {
				t.Fatalf("member without MANAGE_ORGANISATION: %d", r.Status)
			}
			if r := put(f.mallory, kind, img); r.Status != 403 {
				t.Fatalf("other organisation: %d", r.Status)
			}
			if r := e.serve(multipartReq(t, f.alice, "PUT", "/organisations/123456789/"+kind, nil, map[string][]byte{"file": img})); r.Status != 404 {
				t.Fatalf("absent organisation: %d", r.Status)
			}
			if r := e.serve(multipartReq(t, f.alice, "PUT", acme+"/"+kind, map[string]string{"note": "x"}, nil)); r.Status != 400 {
				t.Fatalf("no file: %d", r.Status)
			}
			if r := e.do(f.alice, "PUT", acme+"/"+kind, map[string]any{"file": "x"}); r.Status != 415 {
				t.Fatalf("JSON body: %d", r.Status)
			}
			r := put(f.alice, kind, img)
			if r.Status != 200 {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			hash, _ := r.obj(t)[kind+"_hash"].(string)
			if !isSHA256Hex(hash) {
				t.Fatalf("%s_hash %v", kind, r.obj(t)[kind+"_hash"])
			}
			got := e.must(200, nil, "GET", "/organisations/images/"+hash, nil)
			if !bytes.Equal(got.Body, img) || got.Header.Get("Content-Type") != "image/png" || got.Header.Get("Cache-Control") != avatarCache {
				t.Fatalf("served %d bytes, headers %v", len(got.Body), got.Header)
			}
			small := e.must(200, nil, "GET", "/organisations/images/"+hash+"?size=16", nil)
			if cfg, _, err := image.DecodeConfig(bytes.NewReader(small.Body)); err != nil || cfg.Width != 16 || cfg.Height != 12 {
				t.Fatalf("resized %+v %v", cfg, err)
			}
			e.must(400, nil, "GET", "/organisations/images/"+hash+"?size=9999", nil)
			e.must(403, f.bob, "DELETE", acme+"/"+kind, nil)
			e.must(403, f.mallory, "DELETE", acme+"/"+kind, nil)
			e.must(204, f.alice, "DELETE", acme+"/"+kind, nil)
			e.must(404, nil, "GET", "/organisations/images/"+hash, nil)
			if o := e.must(200, f.bob, "GET", acme, nil).obj(t); o[kind+"_hash"] != nil {
				t.Fatalf("%s_hash after removal: %v", kind, o[kind+"_hash"])
			}
			e.must(204, f.alice, "DELETE", acme+"/"+kind, nil) // removing none is fine
		})
	}
	e.run(t, []scenario{
		{"unknown hash", nil, "GET", "/organisations/images/" + strings.Repeat("ab", 32), nil, 404, nil},
		{"not a hash", nil, "GET", "/organisations/images/abc", nil, 404, nil},
	})
	// A user's avatar is not an organisation image (and the other way round).
	bobAvatar := pngBytes(t, 640, 480)
	if r := e.serve(multipartReq(t, f.bob, "PATCH", "/users/@me", nil, map[string][]byte{"avatar": bobAvatar})); r.Status != 200 {
		t.Fatal(r.Status)
	}
	e.must(404, nil, "GET", "/organisations/images/"+e.must(200, f.bob, "GET", "/users/@me", nil).obj(t)["avatar_hash"].(string), nil)
}

// declaredPNG is a PNG whose header declares w x h pixels and holds one.
func declaredPNG(t *testing.T, w, h uint32) []byte {
	t.Helper()
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 1, 1)))
	data := b.Bytes()
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data
}

// TestHostileOrganisationImages: refused with 400, quickly and without
// large allocations.
func TestHostileOrganisationImages(t *testing.T) {
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	jpg := jpegBytes(t, 200, 200)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"20000 x 20000 PNG header", declaredPNG(t, 20000, 20000)},
		{"4000 x 4000 declared in a tiny file", declaredPNG(t, 4000, 4000)},
		{"truncated JPEG", jpg[:len(jpg)/2]},
		{"SVG named .png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>`)},
		{"too small", pngBytes(t, 8, 8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := e.serve(multipartReq(t, f.alice, "PUT", acme+"/icon", nil, map[string][]byte{"file": tc.data}))
			runtime.ReadMemStats(&after)
			if r.Status != 400 {
				t.Fatalf("status %d, want 400: %s", r.Status, r.Body)
			}
			wantField("file")(t, r)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("refusing it allocated %d MB", grew>>20)
			}
		})
	}
}

// TestStorageUsageKeptCurrent: after every step of a random sequence of
// uploads and removals, storage_usage equals a recount of the distinct
// blobs the organisation holds.
func TestStorageUsageKeptCurrent(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	images := [][]byte{pngBytes(t, 32, 32), pngBytes(t, 40, 30), jpegBytes(t, 50, 50)}
	kinds := []string{"icon", "banner", "logo"}
	rng := rand.New(rand.NewPCG(1, 2))
	orgID := parseTestID(t, f.acme)
	for step := 0; step < 40; step++ {
		kind := kinds[rng.IntN(len(kinds))]
		if rng.IntN(3) == 0 {
			e.must(204, f.alice, "DELETE", acme+"/"+kind, nil)
		} else if r := e.serve(multipartReq(t, f.alice, "PUT", acme+"/"+kind, nil, map[string][]byte{"file": images[rng.IntN(len(images))]})); r.Status != 200 {
			t.Fatalf("step %d: %d %s", step, r.Status, r.Body)
		}
		usage := int64(e.must(200, f.alice, "GET", acme, nil).obj(t)["storage_usage"].(float64))
		recount, err := e.store.R.OrgStorageRecount(context.Background(), orgID)
		if err != nil {
			t.Fatal(err)
		}
		// And independently: the distinct blobs the three hashes name.
		var direct int64
		e.store.Writer.QueryRow(`SELECT coalesce(sum(size), 0) FROM blobs WHERE hash IN
			(SELECT icon_hash FROM organisations WHERE id = ?1 UNION SELECT banner_hash FROM organisations WHERE id = ?1
			 UNION SELECT logo_hash FROM organisations WHERE id = ?1)`, orgID).Scan(&direct)
		if usage != recount || usage != direct {
			t.Fatalf("step %d: storage_usage %d, recount %d, direct %d", step, usage, recount, direct)
		}
	}
}

func TestOrganisationFeatures(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t, func(c *Config) { c.MaxProjectsPerOrg = 5; c.MaxMembersPerOrg = 10 })
	e, acme := f.e, "/organisations/"+f.acme
	e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "P"})
	for _, o := range e.must(200, f.bob, "GET", "/users/@me/organisations", nil).arr(t) {
		feat := o["features"].(map[string]any)
		pr, mb := feat["max_projects"].(map[string]any), feat["max_members"].(map[string]any)
		if pr["limit"] != float64(5) || pr["used"] != float64(1) || mb["limit"] != float64(10) || mb["used"] != float64(2) ||
			feat["smtp"] != false || feat["webhooks"] != false || feat["external_issuers"] != false || feat["sms"] != false {
			t.Fatalf("features %v", feat)
		}
	}
}

func TestIsVerifiedFollowsDomains(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{records: map[string][]string{}}
	f := newOrgFixture(t, withDNS(dns))
	e, acme := f.e, "/organisations/"+f.acme
	verified := func() any { return e.must(200, f.bob, "GET", acme, nil).obj(t)["is_verified"] }
	id := e.verifiedDomain(dns, f.alice, f.acme, "acme.test", false)
	if verified() != false {
		t.Fatal("verified before any domain was approved")
	}
	e.must(200, f.alice, "PATCH", acme+"/domains/"+id, map[string]any{"is_approved": true})
	if verified() != true {
		t.Fatal("not verified with a verified, approved domain")
	}
	e.must(200, f.alice, "PATCH", acme+"/domains/"+id, map[string]any{"is_approved": false})
	if verified() != false {
		t.Fatal("still verified after the approval was withdrawn")
	}
	e.must(200, f.alice, "PATCH", acme+"/domains/"+id, map[string]any{"is_approved": true})
	e.must(204, f.alice, "DELETE", acme+"/domains/"+id, nil)
	if verified() != false {
		t.Fatal("still verified after the domain went")
	}
}

func TestProtectedOrganisation(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	staff := e.staff("Sam")
	e.run(t, []scenario{
		{"owner cannot protect", f.alice, "PATCH", "/admin/organisations/" + f.acme, map[string]any{"is_protected": true}, 403, nil},
		{"flag required", staff, "PATCH", "/admin/organisations/" + f.acme, map[string]any{}, 400, wantField("is_protected")},
		{"staff protects", staff, "PATCH", "/admin/organisations/" + f.acme, map[string]any{"is_protected": true}, 200, wantKey("is_protected", true)},
		{"protected cannot be deleted", f.alice, "DELETE", acme, nil, 400, nil},
		{"is_protected read-only for the owner", f.alice, "PATCH", acme, map[string]any{"is_protected": false}, 400, wantField("is_protected")},
		{"staff lifts it", staff, "PATCH", "/admin/organisations/" + f.acme, map[string]any{"is_protected": false}, 200, wantKey("is_protected", false)},
		{"then it can be deleted", f.alice, "DELETE", acme, nil, 204, nil},
		{"absent organisation", staff, "PATCH", "/admin/organisations/" + f.acme, map[string]any{"is_protected": true}, 404, nil},
	})
}
