package benchreport

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// TestFiguresAreTrue compares the figures the docs quote with what they
// measure: BENCHMARKS.md's figures section (make figures) with the Fastly
// CLI tools/fastlycli installs and, where make has built them, with the
// modules (within 5%, so that an edit to the edge does not fail every test
// until the next make figures, but a stale figure does); and every "Fastly
// CLI x.y.z" in the README and docs/ with the CLI installed.
func TestFiguresAreTrue(t *testing.T) {
	cli, err := FastlyCLIVersion(filepath.Join(repoRoot, "tools", "fastlycli", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	figures := SectionText(string(doc), "figures")
	if figures == "" {
		t.Fatal("BENCHMARKS.md has no figures section: run make figures")
	}
	if !strings.Contains(figures, "| Fastly CLI the tests run | "+cli+" |") {
		t.Errorf("BENCHMARKS.md's figures name another Fastly CLI than %s (tools/fastlycli/package.json): run make figures", cli)
	}
	rows := regexp.MustCompile("(?m)^\\| (\\w+) module \\(.*\\) \\| [0-9.]+ MB \\(([0-9,]+) bytes\\) \\| `(bin/[^`]+)` \\|$").FindAllStringSubmatch(figures, -1)
	if len(rows) == 0 {
		t.Fatalf("BENCHMARKS.md's figures quote no module size:\n%s", figures)
	}
	for _, r := range rows {
		quoted, _ := strconv.ParseFloat(strings.ReplaceAll(r[2], ",", ""), 64)
		fi, err := os.Stat(filepath.Join(repoRoot, r[3]))
		if err != nil {
			t.Logf("%s is not built: its size (%s bytes) is not checked", r[3], r[2])
			continue
		}
		if built := float64(fi.Size()); built < quoted*0.95 || built > quoted*1.05 {
			t.Errorf("%s is %s, but BENCHMARKS.md quotes %s: run make figures", r[3], MB(fi.Size()), MB(int64(quoted)))
		}
	}
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	quote := regexp.MustCompile(`Fastly CLI (\d+\.\d+\.\d+)`)
	for _, file := range append(docs, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quote.FindAllStringSubmatch(string(b), -1) {
			if m[1] != cli {
				t.Errorf("%s quotes the Fastly CLI %s; the tests run %s", file, m[1], cli)
			}
		}
	}
}
