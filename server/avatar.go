package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"runtime"
	"strconv"

	"golang.org/x/image/draw"

	"workspace/db"
)

// Avatar limits. The upper bound on each side keeps a full decode (needed to
// prove the file is whole, and to resize) to about 64 MiB.
const (
	avatarMinWidth  = 640
	avatarMinHeight = 480
	avatarMaxSide   = 4096
	avatarMaxBytes  = 10 << 20
	avatarSizeMin   = 16
	avatarSizeMax   = 1024
	avatarCache     = "public, max-age=900" // the spec's 15 minutes
)

// avatarFile is an uploaded avatar that passed every check.
type avatarFile struct {
	hash        string // SHA-256 hex of data
	contentType string
	data        []byte
}

// checkAvatar validates an upload: JPEG or PNG, at least 640 x 480. The
// header is read first: a small file can declare a huge image, and decoding
// that would allocate without bound.
func checkAvatar(data []byte) (avatarFile, error) {
	if len(data) > avatarMaxBytes {
		return avatarFile{}, fieldError("avatar", "must be at most 10 MiB")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "jpeg" && format != "png") {
		return avatarFile{}, fieldError("avatar", "must be a JPEG or PNG image")
	}
	if cfg.Width < avatarMinWidth || cfg.Height < avatarMinHeight {
		return avatarFile{}, fieldError("avatar", fmt.Sprintf("must be at least %d x %d pixels (got %d x %d)", avatarMinWidth, avatarMinHeight, cfg.Width, cfg.Height))
	}
	if cfg.Width > avatarMaxSide || cfg.Height > avatarMaxSide {
		return avatarFile{}, fieldError("avatar", fmt.Sprintf("must be at most %d x %d pixels", avatarMaxSide, avatarMaxSide))
	}
	// A truncated or corrupt body behind a good header would fail later,
	// at every resize; refuse it now.
	if err := decodeSlot(func() error { _, _, err := image.Decode(bytes.NewReader(data)); return err }); err != nil {
		return avatarFile{}, fieldError("avatar", "must be a JPEG or PNG image")
	}
	sum := sha256.Sum256(data)
	return avatarFile{hash: hex.EncodeToString(sum[:]), contentType: "image/" + format, data: data}, nil
}

// Decoding and resizing are CPU and memory heavy; bound how many run at once
// so a burst of avatar requests cannot starve other requests.
var imageSlots = make(chan struct{}, max(1, runtime.NumCPU()))

func decodeSlot(fn func() error) error {
	imageSlots <- struct{}{}
	defer func() { <-imageSlots }()
	return fn()
}

// avatarGet serves an avatar without authentication. Only blobs that are a
// live user's avatar are served, so the route cannot read other files.
func (s *Server) avatarGet(rq *request) error {
	hash := rq.params.ByName("hash")
	if !isSHA256Hex(hash) {
		return notFound("No such avatar.")
	}
	size := 0
	if v, ok := rq.r.URL.Query()["size"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < avatarSizeMin || n > avatarSizeMax {
			return fieldError("size", fmt.Sprintf("must be an integer from %d to %d", avatarSizeMin, avatarSizeMax))
		}
		size = n
	}
	b, err := s.store.R.UserAvatarBlobGet(rq.ctx, hash)
	if err != nil {
		if db.IsNotFound(err) {
			return notFound("No such avatar.")
		}
		return err
	}
	data, ctype := b.Data, b.ContentType
	if size > 0 {
		if data, err = resizeAvatar(b.Data, b.ContentType, size); err != nil {
			return err
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

// resizeAvatar scales the image to fit in size x size, keeping its aspect
// ratio, in its own format. It never enlarges: a smaller image is returned
// as stored.
func resizeAvatar(data []byte, contentType string, size int) ([]byte, error) {
	var out bytes.Buffer
	err := decodeSlot(func() error {
		src, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("stored avatar does not decode: %w", err)
		}
		w, h := src.Bounds().Dx(), src.Bounds().Dy()
		if w <= size && h <= size {
			out.Write(data)
			return nil
		}
		nw, nh := size, size
		if w >= h {
			nh = max(1, h*size/w)
		} else {
			nw = max(1, w*size/h)
		}
		dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
		if contentType == "image/png" {
			return png.Encode(&out, dst)
		}
		return jpeg.Encode(&out, dst, &jpeg.Options{Quality: 85})
	})
	return out.Bytes(), err
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
