package web_test

// Every write route of the server has a sentence in the audit log's table
// (web/src/lib/auditsentences.ts, issue 29), so no entry reaches a person as
// a route pattern.

import (
	"os"
	"regexp"
	"testing"
)

func TestAuditSentencesCoverRoutes(t *testing.T) {
	routes, err := os.ReadFile("../server/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("src/lib/auditsentences.ts")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+"((?:POST|PUT|PATCH|DELETE) [^"]+)": \["(created|changed|deleted|signed|shared|other)", "[A-Z][a-z]+", "[a-z][^"]+"\],$`).FindAllSubmatch(table, -1) {
		have[string(m[1])] = true
	}
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^\s+\{"(POST|PUT|PATCH|DELETE)", "([^"]+)"`).FindAllSubmatch(routes, -1) {
		n++
		if r := string(m[1]) + " " + string(m[2]); !have[r] {
			t.Errorf("the write route %s has no sentence in src/lib/auditsentences.ts", r)
		}
	}
	if n < 100 {
		t.Fatalf("found only %d write routes in server/routes.go: has its format changed?", n)
	}
}
