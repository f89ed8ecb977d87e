package web_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/boombuler/barcode/qr"
)

// decodeQR reads the text of a drawn QR code matrix (m[y][x], true is
// dark), so a test can check what a QR code on a page says. It reads
// versions 1-6 at error correction level M (what QrCode.svelte draws for a
// link) and skips error correction: the matrix comes from the page's SVG,
// not from a camera. The layout follows ISO/IEC 18004 as Project Nayuki's
// QR code generator (which uqr ports) writes it.
func decodeQR(m [][]bool) (string, error) {
	n := len(m)
	v := (n - 17) / 4
	if v < 1 || v > 6 || n != 17+4*v {
		return "", fmt.Errorf("a %d-module code: versions 1-6 only", n)
	}
	// Format: 15 bits beside the top-left finder, masked with 0x5412.
	bit := func(x, y int) int {
		if m[y][x] {
			return 1
		}
		return 0
	}
	format := 0
	for i := 0; i <= 5; i++ {
		format |= bit(8, i) << i
	}
	format |= bit(8, 7)<<6 | bit(8, 8)<<7 | bit(7, 8)<<8
	for i := 9; i < 15; i++ {
		format |= bit(14-i, 8) << i
	}
	format = (format ^ 0x5412) >> 10
	if format>>3 != 0 { // level M is 00
		return "", fmt.Errorf("error correction level bits %02b, want M", format>>3)
	}
	mask := format & 7

	// Function modules: finders with separators and format areas, timing
	// lines, and the one alignment pattern of versions 2-6.
	fn := make([][]bool, n)
	for y := range fn {
		fn[y] = make([]bool, n)
	}
	fill := func(x0, y0, w, h int) {
		for y := y0; y < y0+h; y++ {
			for x := x0; x < x0+w; x++ {
				fn[y][x] = true
			}
		}
	}
	fill(0, 0, 9, 9)
	fill(n-8, 0, 8, 9)
	fill(0, n-8, 9, 8)
	fill(6, 0, 1, n)
	fill(0, 6, n, 1)
	if v >= 2 {
		c := 4*v + 10
		fill(c-2, c-2, 5, 5)
	}

	masked := func(x, y int) bool {
		switch mask {
		case 0:
			return (x+y)%2 == 0
		case 1:
			return y%2 == 0
		case 2:
			return x%3 == 0
		case 3:
			return (x+y)%3 == 0
		case 4:
			return (x/3+y/2)%2 == 0
		case 5:
			return x*y%2+x*y%3 == 0
		case 6:
			return (x*y%2+x*y%3)%2 == 0
		default:
			return ((x+y)%2+x*y%3)%2 == 0
		}
	}
	total := []int{0, 26, 44, 70, 100, 134, 172}[v]
	raw := make([]byte, total)
	i := 0
	for right := n - 1; right >= 1; right -= 2 {
		if right == 6 {
			right = 5
		}
		for vert := 0; vert < n; vert++ {
			for j := 0; j < 2; j++ {
				x := right - j
				y := vert
				if (right+1)&2 == 0 {
					y = n - 1 - vert
				}
				if fn[y][x] || i >= total*8 {
					continue
				}
				if m[y][x] != masked(x, y) {
					raw[i/8] |= 0x80 >> (i % 8)
				}
				i++
			}
		}
	}

	// Blocks at level M, data codewords interleaved first.
	ecc := []int{0, 10, 16, 26, 18, 24, 16}[v]
	blocks := []int{0, 1, 1, 1, 2, 2, 4}[v]
	short := blocks - total%blocks
	shortData := total/blocks - ecc
	lens := make([]int, blocks)
	data := make([][]byte, blocks)
	most := 0
	for b := range lens {
		lens[b] = shortData
		if b >= short {
			lens[b]++
		}
		most = max(most, lens[b])
	}
	k := 0
	for i := 0; i < most; i++ {
		for b := range blocks {
			if i < lens[b] {
				data[b] = append(data[b], raw[k])
				k++
			}
		}
	}
	var stream []byte
	for _, d := range data {
		stream = append(stream, d...)
	}

	// Segments: numeric, alphanumeric and byte, up to the terminator.
	pos := 0
	read := func(nbits int) (int, error) {
		if pos+nbits > len(stream)*8 {
			return 0, errors.New("the data runs past the code")
		}
		out := 0
		for range nbits {
			out = out<<1 | int(stream[pos/8]>>(7-pos%8)&1)
			pos++
		}
		return out, nil
	}
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
	var text []byte
	for pos+4 <= len(stream)*8 {
		mode, _ := read(4)
		switch mode {
		case 0:
			return string(text), nil
		case 1:
			count, err := read(10)
			for ; err == nil && count >= 3; count -= 3 {
				var d int
				if d, err = read(10); err == nil {
					text = fmt.Appendf(text, "%03d", d)
				}
			}
			if err == nil && count == 2 {
				var d int
				d, err = read(7)
				text = fmt.Appendf(text, "%02d", d)
			} else if err == nil && count == 1 {
				var d int
				d, err = read(4)
				text = fmt.Appendf(text, "%d", d)
			}
			if err != nil {
				return "", err
			}
		case 2:
			count, err := read(9)
			for ; err == nil && count >= 2; count -= 2 {
				var d int
				if d, err = read(11); err == nil {
					text = append(text, alnum[d/45], alnum[d%45])
				}
			}
			if err == nil && count == 1 {
				var d int
				d, err = read(6)
				text = append(text, alnum[d])
			}
			if err != nil {
				return "", err
			}
		case 4:
			count, err := read(8)
			for ; err == nil && count > 0; count-- {
				var b int
				b, err = read(8)
				text = append(text, byte(b))
			}
			if err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("segment mode %04b not read here", mode)
		}
	}
	return string(text), nil
}

// TestDecodeQR checks the decoder on another encoder's codes, of each
// version it reads.
func TestDecodeQR(t *testing.T) {
	for _, text := range []string{
		"HELLO", "http://127.0.0.1:8080/app/join/x", "http://127.0.0.1:35133/app/join/dnBLIfYzQRaUOSR7",
		"https://work.example.com/app/join/AbCdEfGhIjKlMnOp-_", "https://work.example.com/app/join/AbCdEfGhIjKlMnOp-_/and/some/more/path/to/reach/version/six",
	} {
		code, err := qr.Encode(text, qr.M, qr.Auto)
		if err != nil {
			t.Fatal(err)
		}
		n := code.Bounds().Dx()
		m := make([][]bool, n)
		for y := range m {
			m[y] = make([]bool, n)
			for x := range m[y] {
				r, _, _, _ := code.At(x, y).RGBA()
				m[y][x] = r == 0
			}
		}
		got, err := decodeQR(m)
		if err != nil || got != text {
			t.Errorf("%d modules: decoded %q (%v), want %q", n, got, err, text)
		}
	}
}
