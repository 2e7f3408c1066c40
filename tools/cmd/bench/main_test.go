package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/devstack"
)

// TestRun is make bench in miniature: a small event, a small load, and the
// report and plot it writes.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	hot := filepath.Join(dir, "hot.txt")
	if err := os.WriteFile(hot, []byte("pkg: x/queue\nBenchmarkSign-2 \t 100 \t 4348 ns/op \t 2920 B/op \t 39 allocs/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{hotpaths: hot, builds: []build{{name: "Go", version: "go1.x", wasm: devstack.ServiceWasm(filepath.Join("..", "..", "..")), hotpaths: hot}},
		manifest: filepath.Join("..", "..", "..", "fastly.toml"),
		out:      filepath.Join(dir, "BENCHMARKS.md"), plot: filepath.Join(dir, "docs", "flashcrowd.svg"), command: "make bench",
		cacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache"), visitors: 1000, loadVisitors: 64, concurrency: 8,
		began: time.Now()}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(o.out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| metric | edge waiting room | two-counter (model) | ratio | unordered gate (model) | ratio |",
		"](docs/flashcrowd.svg)", "| join | Go | 64 |", "| queue | Sign | 4,348 |", "1,000 visitors, 200 of them in the first minute",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	svg, err := os.ReadFile(o.plot)
	if err != nil || !strings.HasPrefix(string(svg), "<svg") {
		t.Errorf("plot: %v %.40q", err, svg)
	}
}

func TestRunRefusesMissingHotPaths(t *testing.T) {
	err := run(context.Background(), options{hotpaths: filepath.Join(t.TempDir(), "missing.txt")})
	if err == nil || !strings.Contains(err.Error(), "hot paths") {
		t.Fatalf("got %v, want an error naming the hot paths", err)
	}
}
