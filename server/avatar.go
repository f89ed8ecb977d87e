package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/image/draw"

	"workspace/db"
)

// Avatar limits. An upload is decoded whole once (to prove it is whole and
// to normalise it), so its decoded size is bounded, not only its sides: a
// 130 KB PNG can declare 4096 x 4096 16-bit pixels (128 MiB decoded).
// Stored avatars are normalised to 8 bits per channel and at most
// avatarNormalSide a side, so serving and resizing them stays cheap.
const (
	avatarMinWidth   = 640
	avatarMinHeight  = 480
	avatarMaxSide    = 4096
	avatarMaxBytes   = 10 << 20
	avatarMaxDecoded = 48 << 20 // e.g. 4096 x 3072 at 4 bytes a pixel
	avatarNormalSide = 1024
	avatarSizeMin    = 16
	avatarSizeMax    = 1024
	avatarCache      = "public, max-age=900" // the spec's 15 minutes
)

// avatarFile is an uploaded avatar that passed every check, normalised.
type avatarFile struct {
	hash        string // SHA-256 hex of data
	contentType string
	data        []byte
}

// checkAvatar validates an avatar upload (at least 640 x 480).
func checkAvatar(data []byte) (avatarFile, error) {
	return checkImage(data, "avatar", avatarMinWidth, avatarMinHeight)
}

// checkImage validates an uploaded image (JPEG or PNG by content, at least
// minW x minH, within the decoded-size bound) and normalises it; problems
// are 400 naming field. The header is read first: a small file can declare
// a huge image, and decoding that would allocate without bound.
func checkImage(data []byte, field string, minW, minH int) (avatarFile, error) {
	if len(data) > avatarMaxBytes {
		return avatarFile{}, fieldError(field, "must be at most 10 MiB")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "jpeg" && format != "png") {
		return avatarFile{}, fieldError(field, "must be a JPEG or PNG image")
	}
	if cfg.Width < minW || cfg.Height < minH {
		return avatarFile{}, fieldError(field, fmt.Sprintf("must be at least %d x %d pixels (got %d x %d)", minW, minH, cfg.Width, cfg.Height))
	}
	if cfg.Width > avatarMaxSide || cfg.Height > avatarMaxSide {
		return avatarFile{}, fieldError(field, fmt.Sprintf("must be at most %d x %d pixels", avatarMaxSide, avatarMaxSide))
	}
	depth, eightBit := pixelBytes(cfg.ColorModel)
	if int64(cfg.Width)*int64(cfg.Height)*depth > avatarMaxDecoded {
		return avatarFile{}, fieldError(field, fmt.Sprintf("must decode to at most %d MiB (%d x %d pixels of %d bytes)", avatarMaxDecoded>>20, cfg.Width, cfg.Height, depth))
	}
	contentType := "image/" + format
	err = imageQueue.run(func() error {
		// A truncated or corrupt body behind a good header would fail
		// later, at every resize; refuse it now.
		src, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return fieldError(field, "must be a JPEG or PNG image")
		}
		if eightBit && cfg.Width <= avatarNormalSide && cfg.Height <= avatarNormalSide {
			return nil // already in normal form: stored as sent
		}
		data, err = encodeImage(fitWithin(src, avatarNormalSide), contentType)
		return err
	})
	if err != nil {
		return avatarFile{}, err
	}
	sum := sha256.Sum256(data)
	return avatarFile{hash: hex.EncodeToString(sum[:]), contentType: contentType, data: data}, nil
}

// pixelBytes is how many bytes a decoded pixel of the model takes (JPEG's
// YCbCr counted at its largest, 4:4:4), and whether it is 8 bits a channel.
func pixelBytes(m color.Model) (int64, bool) {
	switch m {
	case color.RGBA64Model, color.NRGBA64Model:
		return 8, false
	case color.Gray16Model, color.Alpha16Model:
		return 2, false
	case color.GrayModel, color.AlphaModel:
		return 1, true
	case color.YCbCrModel:
		return 3, true
	}
	if _, ok := m.(color.Palette); ok {
		return 1, true
	}
	return 4, true // RGBA, NRGBA, CMYK
}

// fitWithin scales src to fit in side x side keeping its aspect ratio (never
// enlarging), into 8-bit RGBA.
func fitWithin(src image.Image, side int) *image.RGBA {
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	nw, nh := w, h
	if w > side || h > side {
		if w >= h {
			nw, nh = side, max(1, h*side/w)
		} else {
			nw, nh = max(1, w*side/h), side
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	if nw == w && nh == h {
		draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
	} else {
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	}
	return dst
}

func encodeImage(img image.Image, contentType string) ([]byte, error) {
	var out bytes.Buffer
	var err error
	if contentType == "image/png" {
		err = png.Encode(&out, img)
	} else {
		err = jpeg.Encode(&out, img, &jpeg.Options{Quality: 90})
	}
	return out.Bytes(), err
}

// errImageBusy: the decode queue is full; answered 503 with Retry-After.
var errImageBusy = errors.New("image decoders busy")

// decodeQueue bounds image work: at most `slots` decodes run at once and
// at most `waiting` more wait; beyond that a request is refused at once
// rather than queueing memory and goroutines without bound.
type decodeQueue struct {
	slots    chan struct{}
	admitted atomic.Int64
	limit    int64
}

func newDecodeQueue(slots, waiting int) *decodeQueue {
	return &decodeQueue{slots: make(chan struct{}, slots), limit: int64(slots + waiting)}
}

func (d *decodeQueue) run(fn func() error) error {
	if d.admitted.Add(1) > d.limit {
		d.admitted.Add(-1)
		return errImageBusy
	}
	defer d.admitted.Add(-1)
	d.slots <- struct{}{}
	defer func() { <-d.slots }()
	return fn()
}

// imageQueue is shared by uploads and resizes: decoding is CPU and memory
// heavy, so a burst of avatar requests cannot starve other requests.
var imageQueue = newDecodeQueue(max(1, runtime.NumCPU()), 8)

// busy answers errImageBusy as 503 with Retry-After.
func busy(rq *request, err error) error {
	if errors.Is(err, errImageBusy) {
		rq.w.Header().Set("Retry-After", "1")
		return errorf(http.StatusServiceUnavailable, "Too many images are being processed; try again shortly.")
	}
	return err
}

// avatarGet serves an avatar without authentication. Only blobs that are a
// live user's avatar are served, so the route cannot read other files.
func (s *Server) avatarGet(rq *request) error {
	return s.serveImage(rq, func(hash string) (db.Blob, error) { return s.store.R.UserAvatarBlobGet(rq.ctx, hash) }, "No such avatar.")
}

// serveImage answers GET .../{hash}?size= for an image blob that lookup
// finds (only blobs in use as the route's kind of image): resized to fit in
// size x size through the shared cache, with public cache headers.
func (s *Server) serveImage(rq *request, lookup func(hash string) (db.Blob, error), absent string) error {
	hash := rq.params.ByName("hash")
	if !isSHA256Hex(hash) {
		return notFound("%s", absent)
	}
	size := 0
	if v, ok := rq.r.URL.Query()["size"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < avatarSizeMin || n > avatarSizeMax {
			return fieldError("size", fmt.Sprintf("must be an integer from %d to %d", avatarSizeMin, avatarSizeMax))
		}
		size = n
	}
	b, err := lookup(hash)
	if err != nil {
		if db.IsNotFound(err) {
			return notFound("%s", absent)
		}
		return err
	}
	data, ctype := b.Data, b.ContentType
	if size > 0 {
		key := avatarKey{hash: hash, size: size}
		if cached, ok := s.avatars.get(key); ok {
			data = cached
		} else if data, err = resizeAvatar(b.Data, b.ContentType, size); err != nil {
			return busy(rq, err)
		} else {
			s.avatars.put(key, data)
		}
	}
	h := rq.w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", avatarCache)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("X-Content-Type-Options", "nosniff")
	rq.w.WriteHeader(http.StatusOK)
	_, _ = rq.w.Write(data)
	return nil
}

// avatarResizes counts resizes actually computed (tests see the cache work).
var avatarResizes atomic.Int64

// resizeAvatar scales the image to fit in size x size, keeping its aspect
// ratio, in its own format. It never enlarges: a smaller image is returned
// as stored.
func resizeAvatar(data []byte, contentType string, size int) ([]byte, error) {
	var out []byte
	err := imageQueue.run(func() error {
		src, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("stored avatar does not decode: %w", err)
		}
		avatarResizes.Add(1)
		if w, h := src.Bounds().Dx(), src.Bounds().Dy(); w <= size && h <= size {
			out = data
			return nil
		}
		out, err = encodeImage(fitWithin(src, size), contentType)
		return err
	})
	return out, err
}

// avatarKey is one resized avatar.
type avatarKey struct {
	hash string
	size int
}

// resizedCache keeps resized avatars, bounded by bytes, least recently used
// out first. Entries never go stale: an avatar's hash names its bytes.
type resizedCache struct {
	mu    sync.Mutex
	limit int
	used  int
	order *list.List // front: most recently used; values are avatarKey
	items map[avatarKey]resizedEntry
}

type resizedEntry struct {
	data []byte
	el   *list.Element
}

func newResizedCache(limit int) *resizedCache {
	return &resizedCache{limit: limit, order: list.New(), items: map[avatarKey]resizedEntry{}}
}

func (c *resizedCache) get(k avatarKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e.el)
	return e.data, true
}

func (c *resizedCache) put(k avatarKey, data []byte) {
	if len(data) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	for c.used+len(data) > c.limit {
		oldest := c.order.Back()
		ok := oldest.Value.(avatarKey)
		c.used -= len(c.items[ok].data)
		delete(c.items, ok)
		c.order.Remove(oldest)
	}
	c.items[k] = resizedEntry{data: data, el: c.order.PushFront(k)}
	c.used += len(data)
}
