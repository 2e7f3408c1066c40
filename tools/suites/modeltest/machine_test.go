package modeltest

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"pgregory.net/rapid"
)

// maxVisitors bounds a sequence's visitors, so that its lines stay short
// and each call's answer is checked against every ticket.
const maxVisitors = 8

// invites are what the priority visitors present: one of a single use,
// one of three. They are valid for longer than any sequence runs: the
// edge presents no invite past its Until, and the store forgets its uses
// an hour after that.
var invites = []store.Invite{
	{ID: "i1", Uses: 1, Until: t0.Add(365 * 24 * time.Hour)},
	{ID: "i3", Uses: 3, Until: t0.Add(365 * 24 * time.Hour)},
}

// silences are the quiet spells and outages drawn: beyond a refresh, a
// claim window, a queue timeout, a session; and long ones.
var silences = []time.Duration{20 * time.Second, 40 * time.Second, 100 * time.Second, 10 * time.Minute, 2 * time.Hour}

// knobs narrow the drawn sequences, for runs that look for one defect
// while others are known: MODELTEST_ACTIONS lists the actions to draw
// (comma-separated; all when unset; every test's), MODELTEST_MAXGAP bounds the silence
// between two calls (a Stats call fills any longer one, and quiet spells
// and outages are not drawn).
type knobs struct {
	actions map[string]bool
	maxGap  time.Duration
}

func readKnobs(t *testing.T) knobs {
	var k knobs
	if s := os.Getenv("MODELTEST_ACTIONS"); s != "" {
		k.actions = map[string]bool{}
		for _, a := range strings.Split(s, ",") {
			k.actions[strings.TrimSpace(a)] = true
		}
	}
	if s := os.Getenv("MODELTEST_MAXGAP"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second {
			t.Fatalf("MODELTEST_MAXGAP=%q: want a duration of a second or more", s)
		}
		k.maxGap = d
	}
	return k
}

// TestModel runs random sequences against the script (-rapid.checks of
// them, 100 by default; -rapid.steps actions each on average, 30) and
// checks every answer against the model. A failure prints the shrunk
// sequence, call by call, and the rule it broke.
func TestModel(t *testing.T) {
	e := newEnv(t)
	k := readKnobs(t)
	calls, sequences := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		p := basePolicy(
			rapid.SampledFrom([]int{0, 1, 2, 3}).Draw(rt, "capacity"),
			rapid.SampledFrom([]float64{0, 6, 60}).Draw(rt, "per minute"),
			rapid.IntRange(1, 3).Draw(rt, "burst"),
			rapid.SampledFrom([]float64{0.5, 1}).Draw(rt, "priority share"))
		h := e.harness(rt, p)
		h.maxGap = k.maxGap
		rt.Repeat(h.actions(k))
		calls, sequences = calls+h.calls, sequences+1
		for what, n := range h.m.seen {
			e.seen[what] += n
		}
	})
	t.Logf("%d sequences, %d store calls; seen:", sequences, calls)
	whats := slices.Sorted(maps.Keys(e.seen))
	for _, what := range whats {
		t.Logf("%8d %s", e.seen[what], what)
	}
}

// actions are the steps rapid draws from.
func (h *harness) actions(k knobs) map[string]func(*rapid.T) {
	silence := func(rt *rapid.T) time.Duration {
		if k.maxGap > 0 {
			rt.Skip("no silence longer than MODELTEST_MAXGAP")
		}
		return rapid.SampledFrom(silences).Draw(rt, "silence")
	}
	acts := map[string]func(*rapid.T){
		"join": func(rt *rapid.T) {
			if len(h.vs) >= maxVisitors {
				rt.Skip("room full")
			}
			h.visit(h.newVisitor(nil))
		},
		"vip": func(rt *rapid.T) {
			if len(h.vs) >= maxVisitors {
				rt.Skip("room full")
			}
			inv := rapid.SampledFrom(invites).Draw(rt, "invite")
			h.visit(h.newVisitor(&inv))
		},
		"call": func(rt *rapid.T) {
			h.visit(h.pick(rt, func(v *visitor) bool { return !v.done }))
		},
		"replay": func(rt *rapid.T) {
			// Anyone, gone or not, with any pass still valid: a bot
			// that ended its session comes back with the same one.
			v := h.pick(rt, func(v *visitor) bool { return len(h.replayable(v)) > 0 })
			h.replay(v, rapid.SampledFrom(h.replayable(v)).Draw(rt, "arrival"))
		},
		"end": func(rt *rapid.T) {
			h.endSession(h.pick(rt, func(v *visitor) bool { return v.session.ID != "" }))
		},
		"lose": func(rt *rapid.T) {
			v := h.pick(rt, func(v *visitor) bool { return !v.done })
			h.lose(v, rapid.SampledFrom([]time.Duration{0, time.Second, 3 * time.Second}).Draw(rt, "retry after"))
		},
		"wait": func(rt *rapid.T) {
			h.advance(time.Duration(rapid.IntRange(1, 12).Draw(rt, "seconds")) * time.Second)
		},
		"keepCalling": func(rt *rapid.T) {
			d := rapid.SampledFrom([]time.Duration{20 * time.Second, 40 * time.Second, 65 * time.Second,
				95 * time.Second, 150 * time.Second}).Draw(rt, "for")
			// Some slower than a refresh: a background tab's timers
			// run about once a minute.
			period := rapid.SampledFrom([]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second,
				30 * time.Second, 60 * time.Second}).Draw(rt, "every")
			if k.maxGap > 0 {
				period = min(period, k.maxGap)
			}
			mask := rapid.IntRange(0, 1<<len(h.vs)-1).Draw(rt, "callers (bit i: visitor i+1)")
			var callers []*visitor
			for i, v := range h.vs {
				if mask&(1<<i) != 0 {
					callers = append(callers, v)
				}
			}
			h.keepCalling(d, period, callers)
		},
		"quiet": func(rt *rapid.T) {
			h.advance(silence(rt))
		},
		"outage": func(rt *rapid.T) {
			h.outage(silence(rt), rapid.SampledFrom([]string{seenByPOP, seenByPasses, seenByNobody}).Draw(rt, "seen by"))
		},
		"admit": func(rt *rapid.T) {
			h.operate(store.OpAdmit, int64(rapid.IntRange(1, 3).Draw(rt, "n")), store.Overrides{})
		},
		"pause":    func(*rapid.T) { h.operate(string(store.Pause), 0, store.Overrides{}) },
		"queueAll": func(*rapid.T) { h.operate(string(store.QueueAll), 0, store.Overrides{}) },
		"resume":   func(*rapid.T) { h.operate(string(store.Resume), 0, store.Overrides{}) },
		"clear":    func(*rapid.T) { h.operate(store.OpClear, 0, store.Overrides{}) },
		"reset":    func(*rapid.T) { h.operate(store.OpReset, 0, store.Overrides{}) },
		"stats":    func(*rapid.T) { h.do("someone", call{op: "stats"}) },
		"limits": func(rt *rapid.T) {
			var set store.Overrides
			switch rapid.SampledFrom([]string{"capacity", "rate", "burst", "mode"}).Draw(rt, "limit") {
			case "capacity":
				c := rapid.IntRange(0, 3).Draw(rt, "capacity")
				set.Capacity = &c
			case "rate":
				r := rapid.SampledFrom([]float64{0, 6, 60}).Draw(rt, "per minute")
				set.PerMinute = &r
			case "burst":
				b := rapid.IntRange(0, 3).Draw(rt, "burst")
				set.Burst = &b
			case "mode":
				set.Mode = rapid.SampledFrom([]store.Mode{store.Fifo, store.Passthrough, store.Reject}).Draw(rt, "mode")
			}
			h.operate(store.OpLimits, 0, set)
		},
		"schedule": func(rt *rapid.T) {
			if h.m.pre != nil {
				rt.Skip("a pre-queue is open: its event is passed until its draw")
			}
			h.schedule(rapid.SampledFrom([]string{"weekly", "flash"}).Draw(rt, "event"),
				rapid.SampledFrom([]time.Duration{0, 10 * time.Second, time.Minute}).Draw(rt, "pre-queue in"),
				rapid.SampledFrom([]time.Duration{20 * time.Second, time.Minute, 5 * time.Minute}).Draw(rt, "start after"),
				rapid.SampledFrom([]time.Duration{time.Minute, 10 * time.Minute, time.Hour}).Draw(rt, "lasting"))
		},
		"moveStart": func(rt *rapid.T) {
			if h.m.pre == nil || h.ev == nil {
				rt.Skip("no pre-queue open")
			}
			h.moveStart(rapid.SampledFrom([]time.Duration{-10 * time.Second, 0, 30 * time.Second, 2 * time.Minute}).Draw(rt, "start in"))
		},
		"unschedule": func(rt *rapid.T) {
			if h.m.pre != nil || h.ev == nil {
				rt.Skip("no event, or its pre-queue is open")
			}
			h.ev = nil
			h.t.Logf("%s event unscheduled", h.when())
		},
	}
	if k.actions != nil {
		for name := range acts {
			if !k.actions[name] {
				delete(acts, name)
			}
		}
	}
	return acts
}

// pick draws one of the visitors ok accepts, or skips the action.
func (h *harness) pick(rt *rapid.T, ok func(*visitor) bool) *visitor {
	var vs []*visitor
	for _, v := range h.vs {
		if ok(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		rt.Skip("no visitor to act")
	}
	return vs[rapid.IntRange(0, len(vs)-1).Draw(rt, "visitor")]
}
