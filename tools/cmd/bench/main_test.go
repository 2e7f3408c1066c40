package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
		began: time.Now()}
	// The sections other targets write are kept byte for byte.
	others, err := benchreport.WriteSections("", "bench-pops-large", benchreport.Section{Name: "pops-large", Text: benchreport.POPHeading(1000000) + "\n\nmeasured by make bench-pops-large\n"})
	if err != nil {
		t.Fatal(err)
	}
	if others, err = benchreport.WriteSections(others, "bench-host", benchreport.Section{Name: "reuse", Text: benchreport.ReuseHeading + "\n\nmeasured by make bench-host\n"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.out, []byte(others), 0o644); err != nil {
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
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	for _, name := range []string{"pops-large", "reuse"} {
		if got := benchreport.SectionText(string(md), name); got != benchreport.SectionText(others, name) {
			t.Errorf("make bench changed the section %s: %q", name, got)
		}
	}
	for _, heading := range []string{"## Bot floods", "## Fairness", benchreport.POPHeading(1000)} {
		if strings.Contains(string(md), heading) {
			t.Errorf("make bench wrote %q, which another target owns", heading)
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
	md := rewritten(t, "floods", "## Bot floods", "make bench-floods", func(o options) error {
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
	md := rewritten(t, "pops", benchreport.POPHeading(1000), "make bench-pops", func(o options) error {
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
	md := rewritten(t, "fairness", "## Fairness", "make bench-fairness", func(o options) error {
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

// rewritten runs a command that rewrites the named section, under
// heading, in a report where it stands between two others, and returns
// the report after checking that only the section changed.
func rewritten(t *testing.T, name, heading, command string, run func(o options) error, also ...[2]string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	head := "<!-- section flash-crowd: written by make bench -->\n## Before\n\nx\n<!-- end section flash-crowd -->\n\n"
	tail := "\n<!-- section end-to-end: written by make bench -->\n## End to end\n\nrest\n<!-- end section end-to-end -->\n"
	// also names the other sections (name, heading) the run rewrites, each
	// standing after the first.
	var begin, end, sections string
	for i, s := range append([][2]string{{name, heading}}, also...) {
		b := "<!-- section " + s[0] + ": written by make " + strings.TrimPrefix(command, "make ") + " -->\n"
		end = "<!-- end section " + s[0] + " -->\n"
		if i == 0 {
			begin = b
		}
		sections += b + s[1] + "\n\nold numbers\n" + end
	}
	if err := os.WriteFile(out, []byte(head+sections+tail), 0o644); err != nil {
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
	if !strings.HasPrefix(md, head+begin+heading+"\n\nMeasured by `"+command+"`") || !strings.HasSuffix(md, end+tail) || strings.Contains(md, "old numbers") {
		t.Fatalf("the section was not replaced in place:\n%s", md)
	}
	return md
}

// TestRunHost writes the reusable sandboxes' and the floor's sections
// from the request benchmarks' output and the parts' of a build.
func TestRunHost(t *testing.T) {
	dir := t.TempDir()
	goOut := "goos: linux\nBenchmarkQueuePage/fresh-2  \t      12\t  40000000 ns/op\t        37.20 cpu-ms/req\t        37.20 cpu-ms/req1\t        69.40 p50-ms\t       346.9 p99-ms\t         1.000 sandboxes/req\n" +
		"BenchmarkQueuePage/reused-2 \t      12\t  12000000 ns/op\t        12.70 cpu-ms/req\t        33.00 cpu-ms/req1\t         8.40 cpu-ms/req2\t         8.50 cpu-ms/req3\t         8.60 cpu-ms/req4\t         9.00 cpu-ms/req5\t         8.50 cpu-ms/req6\t        10.80 p50-ms\t        81.00 p99-ms\t         0.1667 sandboxes/req\n" +
		"BenchmarkForwarded/reused-2 \t      12\t  12000000 ns/op\t        6.00 guest-ms/req\t        9.00 cpu-ms/req\t         0.2 sandboxes/req\n" +
		"BenchmarkFloorForward/reused-2 \t      12\t  12000000 ns/op\t        4.00 guest-ms/req\t        6.00 cpu-ms/req\t         0.2 sandboxes/req\n"
	parts := "pkg: x/edge\nBenchmarkLoadSettings \t 100 \t 300000 ns/op \t 12200 B/op \t 135 allocs/op\n"
	for name, text := range map[string]string{"go.txt": goOut, "parts.txt": parts} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := rewritten(t, "reuse", benchreport.ReuseHeading, "make bench-host", func(o options) error {
		o.builds, o.hostRequests, o.hostCount = []build{{name: "Go", version: "go1.x", host: filepath.Join(dir, "go.txt"), parts: filepath.Join(dir, "parts.txt")}}, 12, 1
		o.missing = "TinyGo (not installed)"
		return runHost(context.Background(), o)
	}, [2]string{"floor", benchreport.FloorHeading})
	for _, want := range []string{
		"| queue page | Go (go1.x) | fresh | 37.2 ms | 37.2 ms |  |  |  | 1.00 | 69.4 ms | 346.9 ms |",
		"| queue page | Go (go1.x) | reused | 12.7 ms | 33.0 ms | 8.4 ms | 8.5 ms | 8.5 ms to 9.0 ms | 0.17 | 10.8 ms | 81.0 ms |",
		"-benchtime 12x -count 1 ./suites/e2e", "**Not measured: TinyGo (not installed).**",
		"| admitted (forwarded to the origin) | Go (go1.x) | reused | 6.00 ms | 4.00 ms | 1.50× | ≤ 1.2×: goal missed |",
		"| parsing settings (the config store's values, five rooms) | Go (go1.x) | 300 µs | 15.0% |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
}

// TestRunScript has two harnesses (the same build twice, as before the
// cheaper script is merged) take turns on a line of 100, and writes the
// script's section from them.
func TestRunScript(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "scriptbench")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/edgequeue/waitingroom/tools/cmd/scriptbench").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	md := rewritten(t, "script", benchreport.ScriptHeading, "make bench-script", func(o options) error {
		o.scriptToday, o.scriptBaseline, o.scriptCommit, o.scriptBaselineCommit = bin, bin, "abc1234", "39117c1"
		o.scriptWaiting, o.scriptArgs = "100", "-calls 20 -rounds 2 -passes 2 -clients 2 -saturation-clients 4 -saturation-calls 100 -fill-clients 4"
		return runScript(context.Background(), o)
	})
	for _, want := range []string{
		"this tree (abc1234) against the baseline's, commit 39117c1",
		"| operation | 100 waiting: this tree | baseline | ratio |",
		"scriptbench -serve -waiting 100 -calls 20 -rounds 2 -passes 2 -clients 2 -saturation-clients 4 -saturation-calls 100 -fill-clients 4",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	// A harness that cannot measure fails the run, and the section is kept.
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(out, []byte("# B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{out: out, command: "make bench-script", began: time.Now(), scriptToday: bin, scriptBaseline: bin, scriptWaiting: "1"}
	if err := runScript(context.Background(), o); err == nil || !strings.Contains(err.Error(), "a line of 1") {
		t.Errorf("a line of 1: %v, want it refused", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "# B\n" {
		t.Errorf("a failed run wrote the report:\n%s", b)
	}
}

// TestRunFigures writes the figures' section from a module and a
// package.json.
func TestRunFigures(t *testing.T) {
	dir := t.TempDir()
	wasm, pkg := filepath.Join(dir, "main.tinygo.wasm"), filepath.Join(dir, "package.json")
	if err := os.WriteFile(wasm, make([]byte, 1891434), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pkg, []byte(`{"dependencies": {"@fastly/cli-linux-x64": "16.1.0"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "BENCHMARKS.md")
	if err := os.WriteFile(out, []byte("# B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{out: out, command: "make figures", began: time.Now(), cliPackage: pkg,
		builds: []build{{name: "TinyGo", version: "0.33.0", wasm: wasm}}}
	if err := runFigures(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(out)
	for _, want := range []string{"| TinyGo module (0.33.0) | 1.89 MB (1,891,434 bytes) | `bin/main.tinygo.wasm` |", "| Fastly CLI the tests run | 16.1.0 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
}

func TestRunRefusesMissingHotPaths(t *testing.T) {
	err := run(context.Background(), options{hotpaths: filepath.Join(t.TempDir(), "missing.txt")})
	if err == nil || !strings.Contains(err.Error(), "hot paths") {
		t.Fatalf("got %v, want an error naming the hot paths", err)
	}
}

// TestRewriteKeepsAnotherTargetsSection: a target that rewrites its
// section while another measures (make bench-script beside make
// bench-shards) keeps what it wrote.
func TestRewriteKeepsAnotherTargetsSection(t *testing.T) {
	o := options{out: filepath.Join(t.TempDir(), "BENCHMARKS.md"), began: time.Now()}
	write := func(doc, target, name, text string) string {
		t.Helper()
		out, err := benchreport.WriteSections(doc, target, benchreport.Section{Name: name, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := write(write("", "bench-script", "script", "## Script\n\nold\n"), "bench-host", "reuse", benchreport.ReuseHeading+"\n\nold\n")
	if err := os.WriteFile(o.out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	err := rewrite(o, "reuse", "bench-host", func(benchreport.Results) string { return benchreport.ReuseHeading + "\n\nnew\n" },
		func(*benchreport.Results) error {
			// Meanwhile, make bench-script rewrites its own section.
			doc, err := os.ReadFile(o.out)
			if err != nil {
				return err
			}
			return os.WriteFile(o.out, []byte(write(string(doc), "bench-script", "script", "## Script\n\nnew\n")), 0o644)
		})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(o.out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"script", "reuse"} {
		if got := benchreport.SectionText(string(md), name); !strings.Contains(got, "new") {
			t.Errorf("section %s: %q, want each target's new text", name, got)
		}
	}
}
