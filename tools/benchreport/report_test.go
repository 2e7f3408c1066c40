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

func TestMarkdownAndPlot(t *testing.T) {
	reports := []sim.Report{report("ours", 5000, 800, 0), report("model A", 10000, 700, 0), report("model B", 2500, 800, 40)}
	cfg := sim.Crowd(1000, 200, 100, 10*time.Minute)
	md := Markdown(Results{Date: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Command: "make bench", Workload: cfg,
		Reports: reports, Plot: "docs/flashcrowd.svg", HotPaths: []HotPath{{"queue", "Sign", 4348, 2920, 39}},
		Load: load.Report{Visitors: 10, Concurrency: 2, Phases: []load.Phase{{Kind: "join", Requests: 10, Elapsed: time.Second}}}})
	for _, want := range []string{
		"| store calls, total | 5,000 | 10,000 | 0.50× | 2,500 | 2.00× |",
		"| FIFO inversions | 0 | 0 | both 0 | 40 | 0 (ours 0) |",
		"| queue | Sign | 4,348 | 2,920 | 39 |",
		"![Queue length, live visitors and admissions over time](docs/flashcrowd.svg)",
		"| join | 10 | 10.0 |",
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
