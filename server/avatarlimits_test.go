package server

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// hugeDeclaredPNG is a small PNG whose header declares w x h pixels of 16
// bits a channel: what DecodeConfig sees of the 130 KB bomb.
func hugeDeclaredPNG(t *testing.T, w, h uint32) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA64(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	// IHDR data starts after the 8-byte signature, 4-byte length, 4-byte type.
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data
}

func png16(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA64(image.Rect(0, 0, w, h))
	for y := 0; y < h; y += 3 {
		for x := 0; x < w; x += 3 {
			img.Set(x, y, color.RGBA64{uint16(x * 50), uint16(y * 70), 9000, 65535})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAvatarUploadBoundsAndNormalises: an upload declaring more decoded
// bytes than the bound is refused from its header alone; a 16-bit image
// larger than the normal side is stored 8-bit and at most 1024 a side.
func TestAvatarUploadBoundsAndNormalises(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	bomb := hugeDeclaredPNG(t, 4096, 4096)
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(bomb)); err != nil || cfg.Width != 4096 {
		t.Fatalf("test bomb header: %+v %v", cfg, err)
	} else if depth, _ := pixelBytes(cfg.ColorModel); depth != 8 {
		t.Fatalf("test bomb decodes to %d bytes a pixel, want 8", depth)
	}
	r := e.serve(multipartReq(t, alice, "PATCH", "/users/@me", nil, map[string][]byte{"avatar": bomb}))
	if r.Status != 400 {
		t.Fatalf("4096 x 4096 16-bit: status %d, want 400: %s", r.Status, r.Body)
	}
	wantField("avatar")(t, r)

	r = e.serve(multipartReq(t, alice, "PATCH", "/users/@me", nil, map[string][]byte{"avatar": png16(t, 1300, 975)}))
	if r.Status != 200 {
		t.Fatalf("16-bit 1300 x 975: status %d: %s", r.Status, r.Body)
	}
	hash := r.obj(t)["avatar_hash"].(string)
	got := e.must(200, nil, "GET", "/users/avatar/"+hash, nil)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(got.Body))
	if err != nil || format != "png" || cfg.Width != 1024 || cfg.Height != 768 {
		t.Fatalf("stored %s %dx%d (%v), want png 1024x768", format, cfg.Width, cfg.Height, err)
	}
	if depth, eight := pixelBytes(cfg.ColorModel); !eight || depth > 4 {
		t.Fatalf("stored colour model %T is not 8 bits a channel", cfg.ColorModel)
	}
}

// TestConcurrentAvatarResizesStayBounded: many unauthenticated resizes at
// once stay within a memory bound, each size is computed once and then
// served from the cache, and a full decode queue answers 503 with
// Retry-After instead of growing.
func TestConcurrentAvatarResizesStayBounded(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice")
	r := e.serve(multipartReq(t, alice, "PATCH", "/users/@me", nil, map[string][]byte{"avatar": png16(t, 1300, 975)}))
	if r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	hash := r.obj(t)["avatar_hash"].(string)
	sizes := make([]int, 12)
	for i := range sizes {
		sizes[i] = 40 + 23*i
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fetch := func() (ok, busy int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for _, size := range sizes {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				r := e.do(nil, "GET", "/users/avatar/"+hash+"?size="+strconv.Itoa(size), nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Status == 200:
					ok++
				case r.Status == 503 && r.Header.Get("Retry-After") != "":
					busy++
				default:
					t.Errorf("size %d: status %d %s", size, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		return ok, busy
	}
	resizes := avatarResizes.Load()
	for round := 0; round < 3; round++ { // refused sizes come again until all are cached
		if _, busy := fetch(); busy == 0 {
			break
		}
	}
	close(stop)
	<-sampled
	if grew := peak - min(peak, before.HeapAlloc); grew > 96<<20 {
		t.Errorf("live heap grew %d MB during the resizes, want under 96", grew>>20)
	}
	computed := avatarResizes.Load() - resizes
	if computed > int64(len(sizes)) {
		t.Errorf("%d resizes computed for %d sizes: the cache did not serve repeats", computed, len(sizes))
	}
	before2 := avatarResizes.Load()
	if ok, busy := fetch(); ok+busy != len(sizes) {
		t.Errorf("ok %d busy %d", ok, busy)
	}
	if n := avatarResizes.Load() - before2; n > int64(len(sizes))-int64(computed) {
		t.Errorf("%d more resizes for sizes already served", n)
	}

	// A full queue refuses at once.
	saved := imageQueue
	imageQueue = newDecodeQueue(1, 0)
	defer func() { imageQueue = saved }()
	hold, held := make(chan struct{}), make(chan struct{})
	go imageQueue.run(func() error { close(held); <-hold; return nil })
	<-held
	r = e.do(nil, "GET", "/users/avatar/"+hash+"?size=17", nil)
	close(hold)
	if r.Status != 503 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("full queue: status %d, Retry-After %q; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"))
	}
	assertErrorBody(t, r)
}
