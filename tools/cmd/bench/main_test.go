package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/sim"
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
		began: time.Now(), floods: shortFloods, fairness: sim.FairnessScenarios[:1], draws: shortDraws}
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
		"\n## Bot floods\n", "| 20 bot joins/s for 10s | before |", "| 20 bot joins/s for 10s | after |",
		"\n## Fairness\n", "| first come, first served | everyone |", "| the draw: package draw | 5 tickets × 2,000 keys |",
		"| the draw: the store's script on Redis | 5 tickets × 20 draws |",
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

// shortFloods is a bot flood short enough for a test.
var shortFloods = []sim.FloodScenario{{Name: "20 bot joins/s for 10s", Bots: sim.BotFlood{PerSecond: 20, For: 10 * time.Second}}}

// TestRunFloods rewrites the bot floods' section of a report in place:
// the 200 bots, whose tickets are never polled, take places before the
// armour and none after it.
func TestRunFloods(t *testing.T) {
	md := rewritten(t, "## Bot floods", "make bench-floods", func(o options) error {
		o.floods = []sim.FloodScenario{{Name: "200 bot joins/s for 10s", Bots: sim.BotFlood{PerSecond: 200, For: 10 * time.Second}}}
		return runFloods(context.Background(), o)
	})
	var before, after string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| 200 bot joins/s for 10s | before |") {
			before = line
		}
		if strings.HasPrefix(line, "| 200 bot joins/s for 10s | after |") {
			after = line
		}
	}
	// Columns: bots, edge, mean, p90, admitted, places to bots, bot joins.
	if cells := strings.Split(before, " | "); len(cells) < 7 || cells[5] == "0" || cells[6] != "2,000" {
		t.Errorf("before: %q, want 2,000 bot joins taking places", before)
	}
	if cells := strings.Split(after, " | "); len(cells) < 7 || cells[5] != "0" || cells[6] != "0" {
		t.Errorf("after: %q, want no bot joins and no places", after)
	}
}

// shortDraws are chi-square tests of the draw small enough for a test.
var shortDraws = []drawTest{{tickets: 5, draws: 2000}, {tickets: 5, draws: 20, store: true}}

// TestRunFairness rewrites the fairness section of a report in place: the
// drawn pre-queue is called in an order unrelated to arrival, everyone
// after it strictly later and first come, first served.
func TestRunFairness(t *testing.T) {
	md := rewritten(t, "## Fairness", "make bench-fairness", func(o options) error {
		o.visitors, o.fairness, o.draws = 1000, sim.FairnessScenarios[2:], shortDraws
		return runFairness(context.Background(), o)
	})
	rows := map[string]string{}
	for _, line := range strings.Split(md, "\n") {
		if cells := strings.Split(line, " | "); len(cells) > 3 {
			rows[cells[0]+" | "+cells[1]] = line
		}
	}
	// Columns: scenario, group, tickets, calling order, admissions, chi-square.
	pre := strings.Split(rows["| "+sim.FairnessScenarios[2].Name+" | pre-queue"], " | ")
	if len(pre) < 6 || !strings.HasPrefix(pre[3], "0.") || pre[3] < "0.35" || pre[3] > "0.65" {
		t.Errorf("the pre-queue: %q, want a calling order about 0.5 from arrival", pre)
	}
	later := rows["| "+sim.FairnessScenarios[2].Name+" | arrivals after the start"]
	if !strings.Contains(later, "| 0 (of ") || !strings.Contains(later, "| 0 tickets from after the start were called before a pre-queue ticket") {
		t.Errorf("after the start: %q, want first come, first served and nobody before the pre-queue", later)
	}
	if draw := rows["| the draw: the store's script on Redis | 5 tickets × 20 draws"]; !strings.Contains(draw, "/ 16 / 39.3 | within the critical value") {
		t.Errorf("the store's draw: %q", draw)
	}
}

// rewritten runs a command that rewrites the section under heading in a
// report where it stands between two others, and returns the report after
// checking that only the section changed.
func rewritten(t *testing.T, heading, command string, run func(o options) error) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	const head, tail = "# Benchmarks\n\nintro\n\n## Before\n\nx\n\n", "\n## End to end: the real wasm in the local host, both builds\n\nrest\n"
	if err := os.WriteFile(out, []byte(head+heading+"\n\nold numbers\n"+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(options{out: out, command: command, began: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.HasPrefix(md, head+heading+"\n\nMeasured by `"+command+"`") || !strings.HasSuffix(md, tail) || strings.Contains(md, "old numbers") {
		t.Fatalf("the section was not replaced in place:\n%s", md)
	}
	return md
}

func TestRunRefusesMissingHotPaths(t *testing.T) {
	err := run(context.Background(), options{hotpaths: filepath.Join(t.TempDir(), "missing.txt")})
	if err == nil || !strings.Contains(err.Error(), "hot paths") {
		t.Fatalf("got %v, want an error naming the hot paths", err)
	}
}
