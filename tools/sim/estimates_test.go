package sim

import (
	"testing"
	"time"
)

// TestWaitEstimates plays a rate room and a capacity room, each with and
// without an operator's one-off "admit N", and compares the wait each
// visitor's page showed with the wait that followed (Estimates): no
// visitor is told "less than a minute" two minutes or more before their
// turn, the waits that followed fall in the range shown for nine tenths
// of the time and their median is within a factor of 1.5 of the estimate,
// and the page says "not known" (a capacity room's first minutes, before
// as many have left as it holds) a fifth of the time at most.
//
// Nor does an estimate go back up by half and two minutes, but where an
// "admit N" overfilled a capacity room: five minutes on, the admissions the
// store counts no longer hold the admit but still hold the departures that
// drained the room, which called nobody, so the pace reads slow for a
// while (the store does not say how full the room was when its window
// began).
func TestWaitEstimates(t *testing.T) {
	withAdmit := func(cfg Config, at time.Duration, n int64) Config {
		cfg.Admits = []Admit{{At: at, N: n}}
		return cfg
	}
	const rate, capacity = `"new_users_per_minute":60,"burst":10`, `"max_active_users":100`
	tests := []struct {
		name     string
		cfg      Config
		settings string
	}{
		{"rate room", crowd(800, 0), rate},
		{"rate room, admit 200 at 2 minutes", withAdmit(crowd(800, 0), 2*time.Minute, 200), rate},
		{"capacity room", crowd(1500, 100), capacity},
		{"capacity room, admit 100 at 8 minutes", withAdmit(crowd(1500, 100), 8*time.Minute, 100), capacity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := runOurs(t, tc.cfg, tc.settings)
			e := rep.Estimates
			t.Logf("%.0f visitor-minutes, %.3f not known, %.3f within the range shown, median actual/shown %.2f, %d told less than a minute 2+ minutes early, %d saw it go back",
				e.Minutes, e.Unknown, e.Within, e.Ratio, e.SoonLies, e.Rises)
			if e.SoonLies != 0 {
				t.Errorf("%d visitors told less than a minute two minutes or more before their turn", e.SoonLies)
			}
			if e.Within < 0.9 || e.Ratio < 2.0/3 || e.Ratio > 1.5 {
				t.Errorf("%.3f of the time the wait fell in the range shown, median actual/shown %.2f: want 0.9 at least, and 0.67 to 1.5", e.Within, e.Ratio)
			}
			if e.Unknown > 0.2 {
				t.Errorf("%.3f of the time no estimate", e.Unknown)
			}
			if e.Rises != 0 && (len(tc.cfg.Admits) == 0 || tc.settings != capacity) {
				t.Errorf("%d visitors saw the estimate go back", e.Rises)
			}
		})
	}
}
