package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestReadmeNamesEveryCommandAndFlag keeps the README's Commands and
// Configuration sections true: a command or flag added without a line
// there fails here.
func TestReadmeNamesEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if !sub.HasSubCommands() && !strings.Contains(text, "`"+sub.CommandPath()) {
				t.Errorf("README does not name the command %q", sub.CommandPath())
			}
			sub.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if f.Name != "help" && !strings.Contains(text, "--"+f.Name) {
					t.Errorf("README does not name %s's flag --%s", sub.CommandPath(), f.Name)
				}
			})
			walk(sub)
		}
	}
	walk(rootCmd(context.Background(), func(string) string { return "" }, io.Discard, io.Discard))
}

// TestReadmeLinksResolve: every file the README links or names under docs/
// exists, so a moved or renamed page does not leave a dead link.
func TestReadmeLinksResolve(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`docs/[A-Za-z0-9_./-]+\.(?:md|png|service)`).FindAllString(string(readme), -1) {
		if _, err := os.Stat(m); err != nil {
			t.Errorf("README names %s, which does not exist", m)
		}
	}
}
