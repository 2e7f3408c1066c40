package sim

import (
	"testing"
	"time"
)

// TestBotFloods holds the armour of issue 10 to what it promises in
// virtual time: after it, bots that never come back change nothing for the
// visitors (the same seed gives the same admissions and waits) and take no
// place; bots that keep their cookies get no more joins than the
// per-address limit allows. Before it, the same bots take places, which
// shows the measurement sees them.
func TestBotFloods(t *testing.T) {
	if testing.Short() {
		t.Skip("a simulated 20-minute flood")
	}
	cookieless, erl := FloodScenarios[2], FloodScenarios[3]
	if cookieless.Bots.KeepCookies || !erl.Bots.KeepCookies || erl.Bots.IPs == 0 {
		t.Fatalf("scenarios changed: %+v, %+v", cookieless, erl)
	}
	base := runOurs(t, FloodScenarios[0].Flood(After), FloodRoom)
	if base.Admitted == 0 || base.WaitMean == 0 {
		t.Fatalf("no bots: %d admitted, mean wait %v: the event tests nothing", base.Admitted, base.WaitMean)
	}
	// The most joins the limit lets through: the limit from each address
	// in each minute of the flood.
	minutes := int((erl.Bots.For + time.Minute - 1) / time.Minute)
	limit := erl.Bots.IPs * After.JoinsPerIPPerMinute * minutes
	for _, c := range []struct {
		name  string
		cfg   Config
		check func(t *testing.T, r Report)
	}{
		{"after, 200 bots/s without cookies", cookieless.Flood(After), func(t *testing.T, r Report) {
			sameForVisitors(t, r, base)
			if r.BotPlaces() != 0 || r.BotJoins != 0 || r.BotCalls != 0 {
				t.Errorf("bots took %d places with %d joins and %d store calls, want none", r.BotPlaces(), r.BotJoins, r.BotCalls)
			}
		}},
		{"after, 200 bots/s from 10 addresses keeping cookies", erl.Flood(After), func(t *testing.T, r Report) {
			if r.BotJoins > limit || r.BotPlaces() > r.BotJoins {
				t.Errorf("%d bot joins reached the store and took %d places, want at most %d", r.BotJoins, r.BotPlaces(), limit)
			}
			if r.BotJoins == 0 || r.Limited != r.Bots-r.BotJoins {
				t.Errorf("%d of %d bots joined, %d limited: the limit was not what stopped them", r.BotJoins, r.Bots, r.Limited)
			}
		}},
		{"before, 20 bots/s without cookies", FloodScenarios[1].Flood(Before), func(t *testing.T, r Report) {
			if r.BotJoins != r.Bots || r.BotCalled == 0 {
				t.Errorf("%d of %d bots joined, %d of their tickets called: every bot should join, and the line call some", r.BotJoins, r.Bots, r.BotCalled)
			}
			if r.WaitMean <= base.WaitMean {
				t.Errorf("mean wait %v with bots, %v without: the bots cost nothing", r.WaitMean, base.WaitMean)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, runOurs(t, c.cfg, FloodRoom))
		})
	}
}

// sameForVisitors fails unless the visitors fared exactly as in want.
func sameForVisitors(t *testing.T, got, want Report) {
	t.Helper()
	type fate struct {
		admitted, walkedIn, by, lost, never int
		mean, p50, p90, p99                 time.Duration
	}
	of := func(r Report) fate {
		return fate{r.Admitted, r.WalkedIn, r.AdmittedBy(FloodHorizon), r.LostPlaces, r.NeverAdmitted, r.WaitMean, r.WaitP50, r.WaitP90, r.WaitP99}
	}
	if g, w := of(got), of(want); g != w {
		t.Errorf("the visitors fared differently with bots:\n got %+v\nwant %+v", g, w)
	}
}
