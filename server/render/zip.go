package render

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Every ZIP this server opens (an XLSX upload, the DOCX templates and the
// documents made from them) goes through OpenZip and ReadZipFile, so that
// a few kilobytes that inflate to gigabytes (a zip bomb) cost no more
// than the limits below before they are refused.
//
// Two layers: OpenZip refuses at once an archive whose entries are too
// many or declare too many uncompressed bytes, and every read counts what
// it inflates (archive/zip itself fails a read that runs past an entry's
// declared size, and ReadZipFile stops at its own limit as well), so a
// lying header buys nothing.

// ZipLimits bounds what reading one archive may cost.
type ZipLimits struct {
	Entries    int   // entries in the central directory
	EntryBytes int64 // declared uncompressed bytes of any one entry
	TotalBytes int64 // declared uncompressed bytes of all entries together
	// Named overrides EntryBytes for entries whose lower-cased name has
	// one of these prefixes (an XLSX's worksheets are streamed from disk,
	// so they may be larger than the parts held in memory).
	Named map[string]int64
}

// ZipTooLargeError is a refused archive; its text is for people.
type ZipTooLargeError struct{ Msg string }

func (e *ZipTooLargeError) Error() string { return e.Msg }

// ErrNotZip is data that is not a readable ZIP archive.
var ErrNotZip = errors.New("not a ZIP archive")

// DocxLimits bound the DOCX templates and the documents rendered from
// them: far above what they hold (a template is tens of kilobytes; a
// rendered document with 10,000 clauses is a few megabytes).
var DocxLimits = ZipLimits{Entries: 1000, EntryBytes: 256 << 20, TotalBytes: 512 << 20}

func (l ZipLimits) entryLimit(name string) int64 {
	lower := strings.ToLower(name)
	for prefix, n := range l.Named {
		if strings.HasPrefix(lower, prefix) {
			return n
		}
	}
	return l.EntryBytes
}

// OpenZip opens data as a ZIP archive and checks its declared sizes
// against lim before anything is inflated.
func OpenZip(data []byte, lim ZipLimits) (*zip.Reader, error) {
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil, ErrNotZip
	}
	// zip.NewReader allocates every central directory entry it finds
	// (a few hundred bytes each; 16 MiB holds 180,000 empty ones), so the
	// entries are counted first by their signature: an upper bound, as
	// every entry starts with it.
	if bytes.Count(data, []byte("PK\x01\x02")) > lim.Entries {
		return nil, &ZipTooLargeError{fmt.Sprintf("The file holds more than %d parts.", lim.Entries)}
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, ErrNotZip
	}
	var total uint64
	for _, f := range zr.File {
		if f.UncompressedSize64 > uint64(lim.entryLimit(f.Name)) {
			return nil, &ZipTooLargeError{fmt.Sprintf("A part of the file unpacks to more than %s.", Mebibytes(lim.entryLimit(f.Name)))}
		}
		total += f.UncompressedSize64
		if total > uint64(lim.TotalBytes) {
			return nil, &ZipTooLargeError{fmt.Sprintf("The file unpacks to more than %s.", Mebibytes(lim.TotalBytes))}
		}
	}
	return zr, nil
}

// ReadZipFile reads one entry of an archive OpenZip checked, counting the
// inflated bytes rather than trusting the header.
func ReadZipFile(f *zip.File, lim ZipLimits) ([]byte, error) {
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
		return nil, &ZipTooLargeError{fmt.Sprintf("A part of the file unpacks to more than %s.", Mebibytes(limit))}
	}
	return data, nil
}

// VerifyZip inflates every entry once, without keeping it, so that a
// library that reads the archive after (excelize ignores read errors and
// would take a truncated part) gets only entries that inflate to exactly
// their declared size with the right checksum (archive/zip checks both at
// the end of an entry).
func VerifyZip(zr *zip.Reader, lim ZipLimits) error {
	buf := make([]byte, 32<<10)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return ErrNotZip
		}
		limit := lim.entryLimit(f.Name)
		n, err := io.CopyBuffer(io.Discard, io.LimitReader(rc, limit+1), buf)
		rc.Close()
		if n > limit {
			return &ZipTooLargeError{fmt.Sprintf("A part of the file unpacks to more than %s.", Mebibytes(limit))}
		}
		if err != nil || uint64(n) != f.UncompressedSize64 {
			return ErrNotZip
		}
	}
	return nil
}

// CheckDocx bounds a DOCX before a library that reads it whole
// (nguyenthenguyen/docx) opens it. Today only the embedded templates go
// there, but the bound costs a few milliseconds and keeps one rule: no
// archive is inflated unchecked.
func CheckDocx(data []byte) error {
	zr, err := OpenZip(data, DocxLimits)
	if err != nil {
		return err
	}
	return VerifyZip(zr, DocxLimits)
}

func Mebibytes(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
