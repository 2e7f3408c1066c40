package benchreport

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/scriptbench"
)

// scriptLine is a measured line of n whose every op cost us µs a call and
// whose saturation run served calls in wall and cpu.
func scriptLine(n int, us float64, calls int, wall, cpu time.Duration) scriptbench.Line {
	l := scriptbench.Line{Waiting: n, Fill: 90 * time.Second,
		Saturation: scriptbench.Saturation{Clients: 32, Calls: calls, Scripts: calls, Did: calls, Wall: wall, RedisCPU: cpu}}
	for _, op := range scriptbench.Ops {
		l.Ops = append(l.Ops, scriptbench.Op{Name: op, Calls: 100, Scripts: 100, Did: 100, Usec: int64(us * 100),
			CPU: time.Duration(2*us*100) * time.Microsecond})
	}
	return l
}

func TestScriptSection(t *testing.T) {
	cfg := scriptbench.Default
	today := ScriptRun{Name: "this tree", Commit: "abc1234", Script: "5a5a", Result: scriptbench.Result{Redis: "7.0.15", Config: cfg,
		Lines: []scriptbench.Line{scriptLine(1000, 15, 20000, time.Second, time.Second/2), scriptLine(1000000, 20, 20000, 2*time.Second, time.Second)}}}
	baseline := ScriptRun{Name: "baseline", Commit: "39117c1", Script: "5b5b", Result: scriptbench.Result{Redis: "7.0.15", Config: cfg,
		Lines: []scriptbench.Line{scriptLine(1000, 50, 20000, 2*time.Second, 2*time.Second)}}}
	res := Results{Date: time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC), Command: "make bench-script"}
	md := ScriptSection(res, today, baseline, "1", 12*time.Minute, []string{"make bench-script"})
	if strings.Contains(md, "byte for byte") {
		t.Errorf("two scripts said to be the same:\n%s", md)
	}
	baseline.Script = today.Script
	if same := ScriptSection(res, today, baseline, "1", time.Minute, nil); !strings.Contains(same, "is the baseline's, byte for byte** (SHA-1 5a5a)") {
		t.Errorf("the same script twice not said to be:\n%s", same)
	}
	for _, want := range []string{
		ScriptHeading + "\n\nMeasured by `make bench-script` on 2026-11-26 15:00 UTC (this section took 12m0s).",
		"this tree (abc1234) against the baseline's, commit 39117c1",
		"they make 3 passes each together, taking turns round by round",
		"both redis-servers were pinned to CPU 1",
		"| operation | 1,000 waiting: this tree | baseline | ratio | 1,000,000 waiting: this tree | baseline | ratio |",
		// By CPU, then by commandstats.
		"| poll of a called ticket (claim) | 30.0 | 100.0 | 0.30 | 40.0 | not measured | – |",
		"| poll of a called ticket (claim) | 15.0 | 50.0 | 0.30 | 20.0 | not measured | – |",
		// 20,000 calls in 0.5 s of Redis CPU against 20,000 in 2 s.
		"| 1,000 | 40,000 | 20,000 | 50.0% | 10,000 | 10,000 | 100.0% | 4.00 |",
		"| 1,000,000 | 20,000 | 10,000 | 50.0% | not measured | – | – | – |",
		"1,000 waiting in 1m30s (this tree) and 1m30s (baseline); 1,000,000 waiting in 1m30s (this tree) and not measured (baseline)",
		"```\nmake bench-script\n```",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	// It stands after the flash crowd's.
	doc := "<!-- section flash-crowd: written by make bench -->\nx\n<!-- end section flash-crowd -->\n\n<!-- section floods: written by make bench-floods -->\ny\n<!-- end section floods -->\n"
	out, err := WriteSections(doc, "bench-script", Section{Name: "script", Text: md})
	if err != nil {
		t.Fatal(err)
	}
	if i, j, k := strings.Index(out, "section flash-crowd"), strings.Index(out, "section script"), strings.Index(out, "section floods"); !(i < j && j < k) {
		t.Errorf("the script's section is not between the flash crowd's and the floods':\n%s", out)
	}
	if _, err := WriteSections(doc, "bench", Section{Name: "script", Text: md}); err == nil {
		t.Error("make bench wrote the script's section, which make bench-script owns")
	}
}
