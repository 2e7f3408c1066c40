package scriptbench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRun measures a line of 100 with the real script on a real
// redis-server: every call did what its operation is for (Check), and the
// figures are those of a script that ran.
func TestRun(t *testing.T) {
	const waiting, calls, passes = 100, 40, 2
	cfg := Config{Waiting: []int{waiting}, Calls: calls, Rounds: 4, Passes: passes, Clients: 4, SaturationClients: 8, SaturationCalls: 300, FillClients: 8, Log: t.Logf}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Check(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Redis, "7.") && !strings.HasPrefix(res.Redis, "8.") {
		t.Errorf("Redis version %q, want 7 or later (INFO server)", res.Redis)
	}
	if len(res.Lines) != 1 {
		t.Fatalf("%d lines measured, want 1", len(res.Lines))
	}
	l := res.Lines[0]
	if l.Waiting != waiting || l.Fill <= 0 {
		t.Errorf("line of %d filled in %v, want %d filled in some time", l.Waiting, l.Fill, waiting)
	}
	for i, o := range l.Ops {
		if o.Name != Ops[i] {
			t.Errorf("operation %d is %s, want %s", i, o.Name, Ops[i])
		}
		if o.Calls != calls*passes || len(o.Rounds) != 4*passes || len(o.CPURounds) != 4*passes {
			t.Errorf("%s: %d calls in %d and %d rounds, want %d in %d", o.Name, o.Calls, len(o.Rounds), len(o.CPURounds), calls*passes, 4*passes)
		}
		// A script run costs microseconds, not nothing and not a second.
		if us := o.UsecPerCall(); us < 1 || us > 100000 {
			t.Errorf("%s: %.1f µs a call", o.Name, us)
		}
		if us := o.CPUPerCall(); us < 1 || us > 100000 {
			t.Errorf("%s: %.1f µs of CPU a call", o.Name, us)
		}
		// The line stays about as long as it was filled: the rate calls
		// a few, the joins add calls, the admit takes calls away.
		lo, hi := int64(waiting-5*passes), int64(waiting+2)
		if o.Name == OpJoin {
			lo, hi = lo+calls, hi+calls
		}
		if o.WaitingAfter < lo || o.WaitingAfter > hi {
			t.Errorf("%s: %d waiting after, want %d to %d", o.Name, o.WaitingAfter, lo, hi)
		}
	}
	s := l.Saturation
	if s.Clients != 8 || s.Calls != 300*passes {
		t.Errorf("saturation of %d calls by %d clients, want %d by 8", s.Calls, s.Clients, 300*passes)
	}
	// redis-server is one thread: it cannot be busy much longer than the
	// wall time (its background threads are idle here).
	if b := s.Busy(); b <= 0 || b > 1.5 {
		t.Errorf("Redis busy %.2f of the wall time", b)
	}
	if s.PerCoreSecond() < s.PerSecond()/1.5 {
		t.Errorf("%.0f calls per Redis CPU second, below the %.0f served per wall second", s.PerCoreSecond(), s.PerSecond())
	}
}

func TestUsecPerCall(t *testing.T) {
	for _, c := range []struct {
		op   Op
		want float64
	}{
		{Op{Scripts: 4, Usec: 200}, 50},
		{Op{Scripts: 4, Usec: 200, Rounds: []float64{90, 10, 30}}, 30},
		{Op{Scripts: 4, Usec: 200, Rounds: []float64{90, 10, 30, 40}}, 35},
	} {
		if got := c.op.UsecPerCall(); got != c.want {
			t.Errorf("%+v: %v µs a call, want %v", c.op, got, c.want)
		}
	}
}

func TestPairedRatio(t *testing.T) {
	for _, c := range []struct {
		a, b   []float64
		want   float64
		paired bool
	}{
		// Each pair ran at its own time; the medians (20 and 40) would
		// say 0.5, the pairs say 1.
		{[]float64{10, 20, 80}, []float64{10, 40, 80}, 1, true},
		{[]float64{10, 20, 30, 40}, []float64{20, 40, 60, 20}, 0.5, true},
		{[]float64{10, 20}, []float64{10}, 0, false},
		{nil, nil, 0, false},
		{[]float64{10}, []float64{0}, 0, false},
	} {
		if got, paired := PairedRatio(c.a, c.b); got != c.want || paired != c.paired {
			t.Errorf("PairedRatio(%v, %v) = %v, %v, want %v, %v", c.a, c.b, got, paired, c.want, c.paired)
		}
	}
}

// TestCheck: a run where a call did not do what its operation is for, or
// Redis counted other script runs than the calls, is refused.
func TestCheck(t *testing.T) {
	good := func() Result {
		l := Line{Waiting: 10, Saturation: Saturation{Clients: 2, Calls: 5, Scripts: 5, Did: 5, Wall: time.Second, RedisCPU: time.Second / 2, Usec: 500}}
		for _, name := range Ops {
			l.Ops = append(l.Ops, Op{Name: name, Calls: 3, Scripts: 3, Usec: 150, CPU: 200 * time.Microsecond, Did: 3, WaitingAfter: 10})
		}
		return Result{Lines: []Line{l}}
	}
	if err := good().Check(); err != nil {
		t.Fatalf("a good run: %v", err)
	}
	for _, c := range []struct {
		name  string
		spoil func(*Line)
		want  string
	}{
		{"a claim that did not claim", func(l *Line) { l.Ops[3].Did = 2 }, "claim: 2 of 3 calls"},
		{"a script run not counted", func(l *Line) { l.Ops[0].Scripts = 2 }, "stats: Redis counted 2 script runs for 3 calls"},
		{"no time", func(l *Line) { l.Ops[1].Usec = 0 }, "poll: no Redis time"},
		{"no CPU time", func(l *Line) { l.Ops[2].CPU = 0 }, "join: no Redis time"},
		{"an operation missing", func(l *Line) { l.Ops = l.Ops[:5] }, "5 operations measured"},
		{"a poll that lost its place", func(l *Line) { l.Saturation.Did = 4 }, "4 kept their place"},
		{"no CPU", func(l *Line) { l.Saturation.RedisCPU = 0 }, "no time measured"},
	} {
		r := good()
		c.spoil(&r.Lines[0])
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestServe: a pass waits for a step before each round, a request Serve
// does not know, or a pass before a fill, is answered with an error, and
// the requests after it are still served.
func TestServe(t *testing.T) {
	cfg := Config{Calls: 4, Rounds: 2, Passes: 1, Clients: 1, SaturationClients: 1, SaturationCalls: 4, FillClients: 2}
	// Six operations and the saturation run, two rounds each.
	steps := strings.Repeat("step\n", 2*(len(Ops)+1))
	var out strings.Builder
	in := "pass\nfill x\nhello\nfill 10\npass\nfill 10\n" + steps + "step\n"
	if err := Serve(context.Background(), cfg, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r Reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case r.Error != "":
			got = append(got, "error: "+r.Error)
		case r.Config != nil && r.Redis != "":
			got = append(got, "hello")
		case r.Turn:
			got = append(got, "turn")
		case r.Line != nil:
			got = append(got, fmt.Sprintf("line of %d, %d stats calls in %d rounds", r.Line.Waiting, r.Line.Ops[0].Calls, len(r.Line.Ops[0].Rounds)))
		default:
			got = append(got, "ok")
		}
	}
	want := []string{"hello", "error: pass: no line to measure: Fill first", `error: fill x: strconv.Atoi: parsing "x": invalid syntax`,
		`error: request "hello": want "fill N", "pass" or "step"`, "ok", "turn", `error: request "fill 10" while a pass runs: want "step"`}
	for range 2*(len(Ops)+1) - 1 {
		want = append(want, "turn")
	}
	want = append(want, "line of 10, 4 stats calls in 2 rounds", `error: request "step": want "fill N", "pass" or "step"`)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
