package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"unicode"

	"workspace/db"
)

// Induction PDFs: the multipart form of PATCH /inductions/{id} and the
// attachment download.

const (
	pdfContentType = "application/pdf"
	maxPDF         = 20 << 20
	maxFileName    = 200
)

type pdfFile struct {
	hash, name string
	data       []byte
}

// checkPDF accepts only a real PDF: the %PDF- header at the start and an
// %%EOF marker in its last kilobyte, whatever Content-Type was sent.
func checkPDF(data []byte) bool {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return false
	}
	tail := data[max(0, len(data)-1024):]
	return bytes.Contains(tail, []byte("%%EOF"))
}

// cleanFileName keeps the base name of what the client sent, without
// control characters, quotes or path separators, at most 200 characters.
func cleanFileName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '"' || r == '/' || r == '\\' {
			return -1
		}
		return r
	}, name)
	if r := []rune(name); len(r) > maxFileName {
		name = string(r[:maxFileName])
	}
	if name == "" || name == "." || name == ".." {
		name = "induction.pdf"
	}
	return name
}

// readInductionMultipart reads the multipart PATCH: text fields name,
// revision, description, valid_for (seconds), questions (a JSON array of
// update entries) and the file part attachment.
func readInductionMultipart(r *http.Request) (inductionBody, *pdfFile, error) {
	var b inductionBody
	var pdf *pdfFile
	mr, err := r.MultipartReader()
	if err != nil {
		return b, nil, badRequest("The multipart body is malformed.")
	}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return b, pdf, nil
		}
		if err != nil {
			return b, nil, multipartError(err)
		}
		name := part.FormName()
		if name == "" {
			continue
		}
		if seen[name] {
			return b, nil, fieldError(name, "is given more than once")
		}
		seen[name] = true
		limit := int64(maxFormField)
		if name == "attachment" {
			limit = maxPDF
		}
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return b, nil, multipartError(err)
		}
		if int64(len(data)) > limit {
			return b, nil, fieldError(name, "is too large")
		}
		v := string(data)
		if name != "attachment" {
			if problem := textProblem(v); problem != "" {
				return b, nil, fieldError(name, problem)
			}
		}
		switch name {
		case "attachment":
			if !checkPDF(data) {
				return b, nil, fieldError("attachment", "must be a PDF file")
			}
			sum := sha256.Sum256(data)
			pdf = &pdfFile{hash: hex.EncodeToString(sum[:]), name: cleanFileName(part.FileName()), data: data}
		case "name":
			b.Name = &v
		case "revision":
			b.Revision = &v
		case "description":
			b.Description = &v
		case "valid_for":
			n, ok := formSeconds(v)
			if !ok {
				return b, nil, fieldError("valid_for", "must be a whole number of seconds")
			}
			b.ValidFor = &n
		case "questions":
			var qs []questionEntry
			if err := json.Unmarshal(data, &qs); err != nil {
				return b, nil, fieldError("questions", "must be a JSON array of question entries")
			}
			b.Questions = &qs
		}
	}
}

// inductionAttachment streams a PDF of one of the induction's revisions
// (members), under the file name it was uploaded with.
func (s *Server) inductionAttachment(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	hash := rq.params.ByName("hash")
	if !isSHA256Hex(hash) {
		return notFound("The attachment does not exist.")
	}
	var blob db.Blob
	var name string
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		r, err := q.InductionRevisionByFileHash(rq.ctx, db.InductionRevisionByFileHashParams{InductionID: i.ID, FileHash: &hash})
		if db.IsNotFound(err) {
			return notFound("The attachment does not exist.")
		} else if err != nil {
			return err
		}
		if r.FileName != nil {
			name = *r.FileName
		}
		blob, err = q.BlobGet(rq.ctx, hash)
		return err
	})
	if err != nil {
		return err
	}
	h := rq.w.Header()
	h.Set("Content-Type", pdfContentType)
	h.Set("Content-Length", strconv.Itoa(len(blob.Data)))
	h.Set("Content-Disposition", contentDisposition(name))
	rq.w.WriteHeader(http.StatusOK)
	_, _ = rq.w.Write(blob.Data)
	return nil
}

// formSeconds reads valid_for as openapi.yaml's pattern writes it: one to
// ten digits, nothing around them (no sign, no spaces).
func formSeconds(v string) (int64, bool) {
	if len(v) == 0 || len(v) > 10 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}
