package benchreport

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/load"
	"github.com/edgequeue/waitingroom/tools/sim"
)

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/edgequeue/waitingroom/queue
cpu: Intel(R) Xeon(R) Processor
BenchmarkSign-2            	  273081	      4348 ns/op	    2920 B/op	      39 allocs/op
BenchmarkVerify/valid-2    	  155421	      7723.5 ns/op	    3432 B/op	      66 allocs/op
BenchmarkNoMem-2           	  155421	      7723 ns/op
PASS
pkg: github.com/edgequeue/waitingroom/templates
BenchmarkRenderQueue-2   	  911292	      1315 ns/op	    1840 B/op	       3 allocs/op
`
	got, err := ParseGoBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []HotPath{
		{"queue", "Sign", 4348, 2920, 39},
		{"queue", "Verify/valid", 7723.5, 3432, 66},
		{"templates", "RenderQueue", 1315, 1840, 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	// tinygo test names the package after its results.
	tiny := "BenchmarkSign\t   26040\t     53265 ns/op\t    1360 B/op\t      11 allocs/op\nPASS\nok  \tgithub.com/edgequeue/waitingroom/queue\t3.172s\n" +
		"BenchmarkRenderQueue\t 10\t 900 ns/op\t 10 B/op\t 1 allocs/op\nok  \tgithub.com/edgequeue/waitingroom/templates\t1s\n"
	got, err = ParseGoBench(strings.NewReader(tiny))
	if err != nil || len(got) != 2 || got[0] != (HotPath{"queue", "Sign", 53265, 1360, 11}) || got[1].Package != "templates" {
		t.Errorf("tinygo output: %+v %v", got, err)
	}
	if _, err := ParseGoBench(strings.NewReader("PASS\n")); err == nil {
		t.Error("output without results parsed")
	}
}

func TestRatioText(t *testing.T) {
	tests := []struct {
		ours, theirs float64
		want         string
	}{
		{50, 100, "0.50×"},
		{100, 50, "2.00×"},
		{1, 1000, "0.001×"},
		{0, 0, "both 0"},
		{0, 5, "0 (ours 0)"},
		{5, 0, "∞ (theirs 0)"},
		{-1, 3, "n/a"},
	}
	for _, tc := range tests {
		if got := ratioText(tc.ours, tc.theirs); got != tc.want {
			t.Errorf("ratioText(%v, %v) = %q, want %q", tc.ours, tc.theirs, got, tc.want)
		}
	}
}

func report(name string, calls, admitted int, inversions int) sim.Report {
	r := sim.Report{Policy: name, Visitors: 1000, Capacity: 100, Admitted: admitted, Inversions: inversions,
		Calls: map[string]int{"join": calls / 2, "poll": calls / 2}, Requests: map[string]int{"join": 1000, "poll": 4000},
		WaitP99: 3 * time.Minute}
	for i := 0; i <= 60; i++ {
		r.Timeline = append(r.Timeline, sim.Sample{At: time.Duration(i) * 5 * time.Second, Waiting: int64(600 - 10*i), Live: 100, Admitted: 10 * i})
	}
	return r
}

// flooded is r with bots' joins that took places.
func flooded(r sim.Report, sessions, called, joins int) sim.Report {
	r.BotSessions, r.BotCalled, r.BotJoins, r.BotCalls = sessions, called, joins, joins
	r.Calls = map[string]int{"join": r.Calls["join"] + joins, "poll": r.Calls["poll"]}
	return r
}

// TestWriteSections writes one target's section into a file of several:
// every other byte stays as it was, and no target writes another's.
func TestWriteSections(t *testing.T) {
	file := func(floods string) string {
		return "<!-- section summary: written by make bench -->\n# B\n<!-- end section summary -->\n\n" +
			"<!-- section flash-crowd: written by make bench -->\n## Flash\n\nx\n<!-- end section flash-crowd -->\n\n" + floods +
			"<!-- section reuse: written by make bench-host -->\n## Reusable\n\nby the host\n<!-- end section reuse -->\n"
	}
	floods := func(text string) string {
		return "<!-- section floods: written by make bench-floods -->\n## Bot floods\n\n" + text + "\n<!-- end section floods -->\n\n"
	}
	tests := []struct{ name, doc, want string }{
		{"replaced", file(floods("old\nold")), file(floods("new"))},
		{"missing: in the file's order", file(""), file(floods("new"))},
		{"missing: at the end", "# B\n", "# B\n\n" + strings.TrimSuffix(floods("new"), "\n")},
		{"an empty file", "", strings.TrimSuffix(floods("new"), "\n")},
	}
	for _, tc := range tests {
		got, err := WriteSections(tc.doc, "bench-floods", Section{"floods", "## Bot floods\n\nnew\n"})
		if err != nil || got != tc.want {
			t.Errorf("%s: %v\n got %q\nwant %q", tc.name, err, got, tc.want)
		}
	}
	// Writing the reuse section leaves the others byte-identical.
	doc := file(floods("kept"))
	got, err := WriteSections(doc, "bench-host", Section{"reuse", "## Reusable\n\nnew\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary", "flash-crowd", "floods"} {
		if SectionText(got, name) != SectionText(doc, name) || SectionText(doc, name) == "" {
			t.Errorf("writing reuse changed %s: %q", name, SectionText(got, name))
		}
	}
	if SectionText(got, "reuse") != "## Reusable\n\nnew\n" {
		t.Errorf("reuse: %q", SectionText(got, "reuse"))
	}
	for _, bad := range []struct{ target, name, want string }{
		{"bench", "reuse", "written by make bench-host, not make bench"},
		{"bench-pops", "floods", "written by make bench-floods, not make bench-pops"},
		{"bench", "nonesuch", "no section"},
	} {
		if _, err := WriteSections(doc, bad.target, Section{bad.name, "## X\n"}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("make %s writing %s: %v, want %q", bad.target, bad.name, err, bad.want)
		}
	}
	if _, err := WriteSections("<!-- section floods: written by make bench-floods -->\n## Bot floods\n", "bench-floods", Section{"floods", "## Bot floods\n"}); err == nil {
		t.Error("a section without its end marker was overwritten to the end of the file")
	}
}

func TestMarkdownAndPlot(t *testing.T) {
	reports := []sim.Report{report("ours", 5000, 800, 0), report("model A", 10000, 700, 0), report("model B", 2500, 800, 40)}
	cfg := sim.Crowd(1000, 200, 100, 10*time.Minute)
	res := Results{Date: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Command: "make bench", Workload: cfg,
		Reports: reports, Plot: "docs/flashcrowd.svg", HotPaths: []HotPath{{"queue", "Sign", 4348, 2920, 39}},
		Builds: []Build{
			{Name: "Go", Toolchain: "go1.x", HotPaths: []HotPath{{"queue", "Sign", 8000, 2920, 39}, {"queue", "Match", 900, 0, 0}},
				Load: load.Report{Visitors: 10, Concurrency: 2, WasmBytes: 8000000, Phases: []load.Phase{{Kind: "join", Requests: 10, Elapsed: time.Second}}}},
			{Name: "TinyGo", Toolchain: "0.33.0", HotPaths: []HotPath{{"queue", "Sign", 4000, 1000, 9}},
				Load: load.Report{Visitors: 10, Concurrency: 2, WasmBytes: 1000000, Phases: []load.Phase{{Kind: "join", Requests: 10, Elapsed: 2 * time.Second}}}},
		},
		Floods: []Flood{{Scenario: sim.FloodScenarios[1], Before: flooded(reports[0], 7, 10, 1200), After: reports[0]}}}
	md, err := WriteSections("", "bench", BenchSections(res)...)
	if err != nil {
		t.Fatal(err)
	}
	md += Floods(res)
	for _, want := range []string{
		"| store calls, total | 5,000 | 10,000 | 0.50× | 2,500 | 2.00× |",
		"| FIFO inversions | 0 | 0 | both 0 | 40 | 0 (ours 0) |",
		"| queue | Sign | 4,348 | 2,920 | 39 |",
		"![Queue length, live visitors and admissions over time](docs/flashcrowd.svg)",
		"| join | Go | 10 | 10.0 |",
		"| join | TinyGo | 10 | 5.0 |",
		"Go (go1.x) 8,000,000 bytes; TinyGo (0.33.0) 1,000,000 bytes",
		"| package | benchmark | Go ns/op | Go B/op | Go allocs/op | TinyGo ns/op | TinyGo B/op | TinyGo allocs/op | TinyGo ÷ Go |",
		"| queue | Sign | 8,000 | 2,920 | 39 | 4,000 | 1,000 | 9 | 0.50× |",
		"| queue | Match | 900 | 0 | 0 | – | – | – | n/a |",
		"| 20 bot joins/s, no cookies | before | 0s | 0s | 800 of 1,000 | 17 (7 sessions, 10 called) | 1,200 | 0 | 6,200 (1,200) |",
		"| 20 bot joins/s, no cookies | after | 0s | 0s | 800 of 1,000 | 0 | 0 | 0 | 5,000 (0) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	svg := FlashCrowdPlot(cfg, reports)
	lines := 0
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the plot is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	// Queue, live, admissions and capacity; then three designs and capacity.
	if lines != 8 {
		t.Errorf("%d lines drawn, want 8", lines)
	}
}
