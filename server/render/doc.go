// Package render writes the files people download: CSV and XLSX tables
// (one typed table shape, safe against formula injection, laid out to
// print) and the DOCX helpers the document export and the toolbox report
// share (escaped text, right-to-left paragraphs, a header logo, embedded
// images), and it opens every ZIP the server reads within bounds, so a zip
// bomb costs no more than its limits. It knows nothing of the database or
// HTTP: the server hands it values and bytes.
package render
