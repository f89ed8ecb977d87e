package docengine

import "strings"

// Merge3Text merges two edits of a text line by line (diff3): hunks
// changed on one side take that side, equal changes agree, overlapping
// different changes conflict (ok false). Symmetric in o and t.
func Merge3Text(b, o, t string) (string, bool) {
	if o == t || t == b {
		return o, true
	}
	if o == b {
		return t, true
	}
	bl, ol, tl := splitLines(b), splitLines(o), splitLines(t)
	mo, mt := matchLines(bl, ol), matchLines(bl, tl)
	var out strings.Builder
	lb, lo, lt := 0, 0, 0
	for lb < len(bl) || lo < len(ol) || lt < len(tl) {
		i := 0
		for lb+i < len(bl) && mo[lb+i] == lo+i && mt[lb+i] == lt+i {
			i++
		}
		if i > 0 {
			for _, l := range bl[lb : lb+i] {
				out.WriteString(l)
			}
			lb, lo, lt = lb+i, lo+i, lt+i
			continue
		}
		l := lb
		for l < len(bl) && (mo[l] < 0 || mt[l] < 0) {
			l++
		}
		eo, et := len(ol), len(tl)
		if l < len(bl) {
			eo, et = mo[l], mt[l]
		}
		cb, co, ct := bl[lb:l], ol[lo:eo], tl[lt:et]
		switch {
		case eqLines(co, ct) || eqLines(ct, cb):
			writeLines(&out, co)
		case eqLines(co, cb):
			writeLines(&out, ct)
		default:
			return "", false
		}
		lb, lo, lt = l, eo, et
	}
	return out.String(), true
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, "\n")
}

func eqLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func writeLines(sb *strings.Builder, ls []string) {
	for _, l := range ls {
		sb.WriteString(l)
	}
}

// maxLCSCells bounds the quadratic part of line matching; beyond it the
// middle (after common prefix and suffix) matches nothing, so both sides
// changing it conflicts rather than costing unbounded time.
const maxLCSCells = 1 << 20

// matchLines maps each line of a to its matched line of b (-1 if none) by
// a longest common subsequence.
func matchLines(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		m[p] = p
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		m[len(a)-1-s] = len(b) - 1 - s
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	n, k := len(ma), len(mb)
	if n == 0 || k == 0 || n*k > maxLCSCells {
		return m
	}
	dp := make([]int32, (n+1)*(k+1))
	w := k + 1
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				dp[i*w+j] = dp[(i+1)*w+j+1] + 1
			} else if dp[(i+1)*w+j] >= dp[i*w+j+1] {
				dp[i*w+j] = dp[(i+1)*w+j]
			} else {
				dp[i*w+j] = dp[i*w+j+1]
			}
		}
	}
	for i, j := 0, 0; i < n && j < k; {
		switch {
		case ma[i] == mb[j]:
			m[p+i] = p + j
			i++
			j++
		case dp[(i+1)*w+j] >= dp[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return m
}
