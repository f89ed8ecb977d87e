package docengine

import "errors"

// Order keys are fractional-indexing strings (digits 0-9A-Za-z in ASCII
// order, an integer part whose head letter gives its length, then a
// fraction): a key between any two keys always exists, appends stay short
// (4 characters after 3,900 appends) and nothing else is re-keyed.

const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

var errOrderKey = errors.New("docengine: invalid order key")

func digitIdx(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 36
	}
	return -1
}

func intLen(head byte) int {
	switch {
	case head >= 'a' && head <= 'z':
		return int(head-'a') + 2
	case head >= 'A' && head <= 'Z':
		return int('Z'-head) + 2
	}
	return -1
}

func intPart(k string) (string, error) {
	if k == "" {
		return "", errOrderKey
	}
	n := intLen(k[0])
	if n < 0 || n > len(k) {
		return "", errOrderKey
	}
	return k[:n], nil
}

// midpoint returns a fraction strictly between a and b (b "" = 1).
func midpoint(a, b string) string {
	if b != "" {
		n := 0
		for n < len(b) {
			ca := byte('0')
			if n < len(a) {
				ca = a[n]
			}
			if ca != b[n] {
				break
			}
			n++
		}
		if n > 0 {
			rest := ""
			if n < len(a) {
				rest = a[n:]
			}
			return b[:n] + midpoint(rest, b[n:])
		}
	}
	da, db := 0, len(digits)
	if a != "" {
		da = digitIdx(a[0])
	}
	if b != "" {
		db = digitIdx(b[0])
	}
	if db-da > 1 {
		return string(digits[(da+db+1)/2])
	}
	if b != "" && len(b) > 1 {
		return b[:1]
	}
	rest := ""
	if a != "" {
		rest = a[1:]
	}
	return string(digits[da]) + midpoint(rest, "")
}

func incInt(x string) string {
	head, ds := x[0], []byte(x[1:])
	for i := len(ds) - 1; i >= 0; i-- {
		d := digitIdx(ds[i]) + 1
		if d < len(digits) {
			ds[i] = digits[d]
			return string(head) + string(ds)
		}
		ds[i] = '0'
	}
	switch {
	case head == 'Z':
		return "a0"
	case head == 'z':
		return ""
	}
	head++
	if head > 'a' {
		ds = append(ds, '0')
	} else {
		ds = ds[:len(ds)-1]
	}
	return string(head) + string(ds)
}

func decInt(x string) string {
	head, ds := x[0], []byte(x[1:])
	for i := len(ds) - 1; i >= 0; i-- {
		d := digitIdx(ds[i]) - 1
		if d >= 0 {
			ds[i] = digits[d]
			return string(head) + string(ds)
		}
		ds[i] = 'z'
	}
	switch {
	case head == 'a':
		return "Zz"
	case head == 'A':
		return ""
	}
	head--
	if head < 'Z' {
		ds = append(ds, 'z')
	} else {
		ds = ds[:len(ds)-1]
	}
	return string(head) + string(ds)
}

// KeyBetween returns an order key strictly between a and b ("" is open).
func KeyBetween(a, b string) (string, error) {
	switch {
	case a == "" && b == "":
		return "a0", nil
	case a == "":
		ib, err := intPart(b)
		if err != nil {
			return "", err
		}
		if ib != b {
			return ib, nil
		}
		if d := decInt(ib); d != "" {
			return d, nil
		}
		return ib + midpoint("", b[len(ib):]), nil
	case b == "":
		ia, err := intPart(a)
		if err != nil {
			return "", err
		}
		if i := incInt(ia); i != "" {
			return i, nil
		}
		return ia + midpoint(a[len(ia):], ""), nil
	}
	if a >= b {
		return "", errOrderKey
	}
	ia, err := intPart(a)
	if err != nil {
		return "", err
	}
	ib, err := intPart(b)
	if err != nil {
		return "", err
	}
	if ia == ib {
		return ia + midpoint(a[len(ia):], b[len(ib):]), nil
	}
	if i := incInt(ia); i != "" && i < b {
		return i, nil
	}
	return ia + midpoint(a[len(ia):], ""), nil
}
