package server

import (
	"bytes"
	"image"
	"regexp"
	"strings"
	"testing"
)

// FuzzAvatar: no upload panics, and an accepted one is a JPEG or PNG whose
// size is within the limits and whose hash names its bytes.
func FuzzAvatar(f *testing.F) {
	f.Add(pngBytes(f, 640, 480))
	f.Add(jpegBytes(f, 640, 480))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := checkAvatar(data)
		if err != nil {
			return
		}
		cfg, format, cerr := image.DecodeConfig(bytes.NewReader(a.data))
		// Stored in normal form: within avatarNormalSide a side (a very
		// wide upload may end below the minimum height once scaled).
		if cerr != nil || "image/"+format != a.contentType || cfg.Width < 1 || cfg.Height < 1 ||
			cfg.Width > avatarNormalSide || cfg.Height > avatarNormalSide || !isSHA256Hex(a.hash) {
			t.Fatalf("accepted %s %dx%d hash %q (%v)", format, cfg.Width, cfg.Height, a.hash, cerr)
		}
		if _, err := resizeAvatar(a.data, a.contentType, avatarSizeMin); err != nil {
			t.Fatalf("accepted avatar does not resize: %v", err)
		}
	})
}

// FuzzSignature: no input panics, and an accepted signature has the SVG
// shape the spec asks for.
var scriptTag = regexp.MustCompile(`(?i)<script[\s/>]`)

func FuzzSignature(f *testing.F) {
	for _, s := range []string{"<svg></svg>", `<svg viewBox="0 0 1 1"><path d="M0 0"/></svg>`, "<svg><script/></svg>", "<svg", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := sanitizeSignature(s)
		if err != nil || s == "" {
			return
		}
		if !strings.HasPrefix(out, "<svg") || !strings.HasSuffix(out, "</svg>") || scriptTag.MatchString(out) ||
			strings.Contains(strings.ToLower(out), "url(http") {
			t.Fatalf("accepted %q as %q", s, out)
		}
		// The stored form is a fixed point: sanitising it again changes nothing.
		if again, err := sanitizeSignature(out); err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", s, out, again, err)
		}
	})
}

func TestUserInputNormalisers(t *testing.T) {
	t.Parallel()
	phones := []struct {
		in, want string
		ok       bool
	}{
		{"+44 (0) 7700-900.123", "+4407700900123", true},
		{"", "", true},
		{"12", "12", false},
		{"+1-800-FLOWERS", "", false},
	}
	for _, c := range phones {
		got, ok := normalisePhone(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("normalisePhone(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	secrets := []struct {
		in, want string
		ok       bool
	}{
		{"jbsw y3dp ehpk 3pxp", "JBSWY3DPEHPK3PXP", true},
		{"JBSWY3DPEHPK3PXP====", "JBSWY3DPEHPK3PXP", true},
		{"JBSWY3DP", "", false},
		{"JBSWY3DPEHPK3PX1", "", false},
	}
	for _, c := range secrets {
		got, ok := normaliseTOTPSecret(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("normaliseTOTPSecret(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for tz, want := range map[string]bool{"UTC": true, "Europe/London": true, "America/Argentina/Buenos_Aires": true, "": false, "Local": false, "Mars/Base": false, "../UTC": false} {
		if got := validTimezone(tz); got != want {
			t.Errorf("validTimezone(%q) = %v, want %v", tz, got, want)
		}
	}
}
