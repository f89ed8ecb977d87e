package web

import "embed"

// Templates are the document templates the server fills in (the toolbox
// meeting report). toolbox-report.docx is plain WordprocessingML with
// {PLACEHOLDER} runs; server/toolboxreport.go clones the {LINE} paragraph and
// the {SIGNER_NAME} table row.
//
//go:embed templates/*.docx
var Templates embed.FS
