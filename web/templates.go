package web

import "embed"

// Templates are the document templates the server fills in (the toolbox
// meeting report, document exports). toolbox-report.docx is plain
// WordprocessingML with {PLACEHOLDER} runs; server/toolboxreport.go clones the
// {LINE} paragraph and the {SIGNER_NAME} table row. document-export.docx is
// the default export template; server/documentexports.go clones the
// {SHEET_NAME} block, the {HEADER} cell and the {CELL} row. Both have the
// same page header: the organisation's logo in place of its {LOGO} run and
// its name in place of {ORGANISATION}.
//
//go:embed templates/*.docx
var Templates embed.FS
