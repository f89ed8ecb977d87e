package server

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Every ZIP this server opens (an XLSX upload, the DOCX templates and the
// documents made from them) goes through openZip and readZipFile, so that
// a few kilobytes that inflate to gigabytes (a zip bomb) cost no more
// than the limits below before they are refused.
//
// Two layers: openZip refuses at once an archive whose entries are too
// many or declare too many uncompressed bytes, and every read counts what
// it inflates (archive/zip itself fails a read that runs past an entry's
// declared size, and readZipFile stops at its own limit as well), so a
// lying header buys nothing.

// zipLimits bounds what reading one archive may cost.
type zipLimits struct {
	entries    int   // entries in the central directory
	entryBytes int64 // declared uncompressed bytes of any one entry
	totalBytes int64 // declared uncompressed bytes of all entries together
	// named overrides entryBytes for entries whose lower-cased name has
	// one of these prefixes (an XLSX's worksheets are streamed from disk,
	// so they may be larger than the parts held in memory).
	named map[string]int64
}

// errZipTooLarge is a refused archive; its text is for people.
type errZipTooLarge struct{ msg string }

func (e *errZipTooLarge) Error() string { return e.msg }

// errNotZip is data that is not a readable ZIP archive.
var errNotZip = errors.New("not a ZIP archive")

// docxLimits bound the DOCX templates and the documents rendered from
// them: far above what they hold (a template is tens of kilobytes; a
// rendered document with 10,000 clauses is a few megabytes).
var docxLimits = zipLimits{entries: 1000, entryBytes: 256 << 20, totalBytes: 512 << 20}

func (l zipLimits) entryLimit(name string) int64 {
	lower := strings.ToLower(name)
	for prefix, n := range l.named {
		if strings.HasPrefix(lower, prefix) {
			return n
		}
	}
	return l.entryBytes
}

// openZip opens data as a ZIP archive and checks its declared sizes
// against lim before anything is inflated.
func openZip(data []byte, lim zipLimits) (*zip.Reader, error) {
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil, errNotZip
	}
	// zip.NewReader allocates every central directory entry it finds
	// (a few hundred bytes each; 16 MiB holds 180,000 empty ones), so the
	// entries are counted first by their signature: an upper bound, as
	// every entry starts with it.
	if bytes.Count(data, []byte("PK\x01\x02")) > lim.entries {
		return nil, &errZipTooLarge{fmt.Sprintf("The file holds more than %d parts.", lim.entries)}
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, errNotZip
	}
	var total uint64
	for _, f := range zr.File {
		if f.UncompressedSize64 > uint64(lim.entryLimit(f.Name)) {
			return nil, &errZipTooLarge{fmt.Sprintf("A part of the file unpacks to more than %s.", mebibytes(lim.entryLimit(f.Name)))}
		}
		total += f.UncompressedSize64
		if total > uint64(lim.totalBytes) {
			return nil, &errZipTooLarge{fmt.Sprintf("The file unpacks to more than %s.", mebibytes(lim.totalBytes))}
		}
	}
	return zr, nil
}

// readZipFile reads one entry of an archive openZip checked, counting the
// inflated bytes rather than trusting the header.
func readZipFile(f *zip.File, lim zipLimits) ([]byte, error) {
	limit := lim.entryLimit(f.Name)
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &errZipTooLarge{fmt.Sprintf("A part of the file unpacks to more than %s.", mebibytes(limit))}
	}
	return data, nil
}

// verifyZip inflates every entry once, without keeping it, so that a
// library that reads the archive after (excelize ignores read errors and
// would take a truncated part) gets only entries that inflate to exactly
// their declared size with the right checksum (archive/zip checks both at
// the end of an entry).
func verifyZip(zr *zip.Reader, lim zipLimits) error {
	buf := make([]byte, 32<<10)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return errNotZip
		}
		limit := lim.entryLimit(f.Name)
		n, err := io.CopyBuffer(io.Discard, io.LimitReader(rc, limit+1), buf)
		rc.Close()
		if n > limit {
			return &errZipTooLarge{fmt.Sprintf("A part of the file unpacks to more than %s.", mebibytes(limit))}
		}
		if err != nil || uint64(n) != f.UncompressedSize64 {
			return errNotZip
		}
	}
	return nil
}

// checkDocx bounds a DOCX before a library that reads it whole
// (nguyenthenguyen/docx) opens it. Today only the embedded templates go
// there, but the bound costs a few milliseconds and keeps one rule: no
// archive is inflated unchecked.
func checkDocx(data []byte) error {
	zr, err := openZip(data, docxLimits)
	if err != nil {
		return err
	}
	return verifyZip(zr, docxLimits)
}

func mebibytes(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
