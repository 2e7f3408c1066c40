package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/benchreport"
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
	// The large run's section of the POPs' snapshot, written by another
	// command, is kept.
	large := benchreport.POPHeading(1000000) + "\n\nmeasured by make bench-pops-large\n"
	if err := os.WriteFile(o.out, []byte("# Benchmarks\n\n"+large), 0o644); err != nil {
		t.Fatal(err)
	}
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
		"\n## Fairness\n", "| first come, first served | everyone |", "| the draw: package draw | 5 tickets × 2,000 keys (2,000 different draws) |",
		"| the draw: the store's script on Redis | 5 tickets × 20 draws (20 different) |",
		"\n" + benchreport.POPHeading(1000) + "\n", "| edge waiting room, snapshot, 50 POPs | ", large,
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

// TestRunPOPs rewrites the POPs' snapshot's section in place: every
// design of the waiting room exact, today's edge paying a store call per
// poll far from the front, the snapshot a fraction of it.
func TestRunPOPs(t *testing.T) {
	md := rewritten(t, benchreport.POPHeading(1000), "make bench-pops", func(o options) error {
		o.visitors = 1000
		return runPOPs(context.Background(), o)
	})
	rows := map[string][]string{}
	for _, line := range strings.Split(md, "\n") {
		if cells := strings.Split(line, " | "); len(cells) == 14 {
			rows[strings.TrimPrefix(cells[0], "| ")] = cells
		}
	}
	// Columns: design, far, fills, all polls, per admitted, of which polls,
	// peak, total, from a snapshot, overshoot, inversions, lost.
	today := rows["edge waiting room"]
	if len(today) == 0 || today[1] != "6.00" || today[8] != "0" {
		t.Errorf("today's edge: %q, want 6.00 calls per visitor-minute far from the front, nothing from a snapshot", today)
	}
	for _, n := range sim.POPCounts {
		name := "edge waiting room, snapshot, 1 POP"
		if n > 1 {
			name = fmt.Sprintf("edge waiting room, snapshot, %d POPs", n)
		}
		r := rows[name]
		if len(r) == 0 || r[9] != "0" || r[10] != "0" || r[11] != "0" || r[8] == "0" {
			t.Errorf("%s: %q, want no overshoot, inversion or place lost, and polls answered from the snapshot", name, r)
			continue
		}
		// With a thousand visitors, fifty POPs serve too few each for
		// their fills to be cheaper than the polls: one POP must be.
		if far, err := strconv.ParseFloat(r[1], 64); n == 1 && (err != nil || far >= 1) {
			t.Errorf("%s: %s store calls per visitor-minute far from the front, want under 1", name, r[1])
		}
	}
	if len(rows) != 1+len(sim.POPCounts)+2+1 { // and the heading row
		t.Errorf("%d rows: %v", len(rows), rows)
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
	if draw := rows["| the draw: the store's script on Redis | 5 tickets × 20 draws (20 different)"]; !strings.Contains(draw, "/ 16 / 39.3 | within the critical value") {
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
