package benchreport

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// scriptDoc is a file with the script's section as make bench-script
// writes its ceiling's table.
const scriptDoc = `<!-- section script: written by make bench-script -->
## The store's script

**Redis CPU per call, µs**: ...

| operation | 1,000 waiting: this tree | baseline | ratio | 1,000,000 waiting: this tree | baseline | ratio |
|---|---:|---:|---:|---:|---:|---:|
| stats | 20.0 | 60.0 | 0.33 | 30.0 | 65.0 | 0.46 |
| poll, far from the front | 10.0 | 60.0 | 0.17 | 12.0 | 70.0 | 0.17 |
| join | 30.0 | 60.0 | 0.50 | 40.0 | 66.0 | 0.61 |

**usec_per_call of EVALSHA, µs**: ...

| operation | 1,000 waiting: this tree | baseline | ratio | 1,000,000 waiting: this tree | baseline | ratio |
|---|---:|---:|---:|---:|---:|---:|
| stats | 1.0 | 1.0 | 1.00 | 1.0 | 1.0 | 1.00 |

| waiting | this tree: calls per Redis CPU second | wall calls/s | busy | baseline: calls per Redis CPU second | wall calls/s | busy | ratio of calls per CPU second |
|---:|---:|---:|---:|---:|---:|---:|---:|
| 1,000 | 52,000 | 20,000 | 90.0% | 16,500 | 9,000 | 95.0% | 3.15 |
| 1,000,000 | 41,250 | 18,000 | 91.0% | 13,100 | 8,000 | 96.0% | 3.15 |

- The lines filled: ...
<!-- end section script -->
`

func TestScriptCeilings(t *testing.T) {
	// This tree's costliest operation (a join, 40 µs at 1,000,000
	// waiting) allows 25,000 calls a second, fewer than its far polls
	// saturate at (41,250); the baseline's (a far poll, 70 µs) allows
	// 14,286, more than its 13,100.
	got := ScriptCeilings(scriptDoc)
	if len(got) != 2 || got[0].PerSecond != 25000 || got[1].PerSecond != 13100 ||
		!strings.Contains(got[0].From, "join, 40.0 µs at 1,000,000 waiting") || got[0].Name != "this tree's script" ||
		!strings.Contains(got[1].From, "polls far from the front, the least over its line lengths (at 1,000,000 waiting)") {
		t.Errorf("ceilings %+v, want this tree's 25,000 (its costliest operation) and the baseline's 13,100 (its far polls)", got)
	}
	if got := ScriptCeilings("# Benchmarks\n\n| waiting | this tree: calls per Redis CPU second |\n|---|---|\n| 1 | 5 |\n"); len(got) != 0 {
		t.Errorf("a table outside the script's section gave %+v", got)
	}
}

func TestPOPPeaks(t *testing.T) {
	section := func(name, peak string) string {
		return "<!-- section " + name + ": written by make x -->\n## x\n\n| design | far | peak store calls per second | total |\n|---|---:|---:|---:|\n" +
			"| edge waiting room | 6.00 | " + peak + " | 9 |\n| edge waiting room, snapshot, 1 POP | 0.4 | 12 | 9 |\n<!-- end section " + name + " -->\n"
	}
	peaks, ok := POPPeaks(section("pops", "1,880") + section("pops-large", "17,896"))
	if !ok || peaks != [2]int{1880, 17896} {
		t.Errorf("peaks %v, %v; want 1,880 and 17,896", peaks, ok)
	}
	if _, ok := POPPeaks(section("pops", "1,880")); ok {
		t.Error("a file without the large section gave both peaks")
	}
}

// TestShardsSection renders two runs: the headroom is the ceiling over
// the busiest shard's peak, a lag beyond the bound is flagged, and the
// large crowd is put on paper at the most shards only; the busiest
// second is told by kind, with the headroom its joins alone would leave
// the 1,000,000-visitor crowd.
func TestShardsSection(t *testing.T) {
	run := func(k int, peaks []int, lag, bound time.Duration) ShardRun {
		rep := sim.Report{Capacity: 7500, MaxHeld: 7500, PeakCallsPerSecond: 2000, Calls: map[string]int{"poll": 100},
			Shards: sim.ShardFigures{Shards: k, PeakPerSecond: peaks, Joined: make([]int, k), Bound: bound, Across: sim.Order{Lag: lag}}}
		return ShardRun{Shards: k, Report: rep}
	}
	one := run(1, []int{2000}, 0, 10*time.Second)
	one.Report.PeakSecond = map[string]int{"join": 500, "poll": 900, "session": 600}
	s := ShardsRun{Workload: sim.Crowd(100000, 20000, 7500, 40*time.Minute), Room: `"max_active_users":7500`, Large: 10000000,
		Ceilings: []Ceiling{{Name: "this tree's script", PerSecond: 40000, From: "a test"}}, Command: "make bench-shards SHARD_VISITORS=1000000",
		Runs: []ShardRun{one, run(8, []int{250, 300, 260, 250, 250, 250, 250, 250}, 3*time.Minute, 2*time.Minute)}}
	text := ShardsSection(Results{Date: time.Now(), Command: "make bench-shards"}, s)
	for _, want := range []string{
		"| 1 | today's edge | 2,000 | 2,000 | 2,000 | 20.0× |",
		"| 8 | today's edge | 2,000 | 300 | 250, 300, 260, 250, 250, 250, 250, 250 | 133.3× |",
		"| 2m0s | 0 | 3m0s | 0s | **no** |",
		"| 1,000,000 | 200,000 | 8 | today's edge | 20,000 | 3,000 | 300 × 10.00 | 13.3× |",
		"| 10,000,000 | 2,000,000 | 8 | today's edge | 200,000 | 30,000 | 300 × 100.00 | 1.3× |",
		"| 8 | today's edge | 0.15× |",
		"`make bench-shards SHARD_VISITORS=1000000` plays them",
		"- today's edge, the 1,000,000-visitor crowd at K = 1 with at least 4× headroom against this tree's script: 2.0× (on paper; **not met**)",
		"- today's edge, the 10,000,000-visitor crowd at K = 8 within each core's ceiling (this tree's script): headroom 1.3× (on paper; met)",
		"- Overshoot 0 at every K (the origin's and the places held): met",
		"| today's edge | 2,000 | 500 | 900 | 600 | 0 | 0 | 8.0× |",
		"- Cross-shard order within the stated bound at every K: **not met**",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the section lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "| 10,000,000 | 2,000,000 | 1 |") {
		t.Error("the large crowd was put on paper at one shard")
	}
}
