package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// crowd is the admission issue's event: half the visitors in the first
// minute, the rest over ten.
func crowd(visitors, capacity int) Config {
	return Crowd(visitors, visitors/2, capacity, 10*time.Minute)
}

// runOurs plays cfg against the waiting room's script on a fresh
// redis-server, in the room settings describes.
func runOurs(t testing.TB, cfg Config, settings string) Report {
	t.Helper()
	room, err := Room(settings)
	if err != nil {
		t.Fatal(err)
	}
	addr := redistest.Start(t)
	return runPolicy(t, cfg, ours(t, addr, room, 0), addr)
}

// ours is the waiting room's own policy over pops POPs (none: today's
// edge).
func ours(t testing.TB, addr string, room *queue.Room, pops int) *Ours {
	t.Helper()
	o, err := NewOursPOPs(addr, room, pops)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func runPolicy(t testing.TB, cfg Config, p Policy, addr string) Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg, p, resp.NewPool(addr, 2))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", summary(rep))
	return rep
}

func summary(r Report) map[string]any {
	return map[string]any{
		"policy": r.Policy, "admitted": r.Admitted, "max live": r.MaxLive, "max held": r.MaxHeld, "overshoot": r.Overshoot,
		"inversions": r.Inversions, "lost": r.LostPlaces, "never": r.NeverAdmitted, "utilisation": r.Utilisation, "held by the gone": r.IdleHeld,
		"max/min": r.MaxPerMinute, "calls": r.Calls, "requests": r.Requests, "calls/request": r.CallsPerRequest(),
		"bots": r.Bots, "bot joins": r.BotJoins, "bot sessions": r.BotSessions, "bot tickets called": r.BotCalled,
		"bot calls": r.BotCalls, "limited": r.Limited, "wait mean/p50/p90/p99": []time.Duration{r.WaitMean, r.WaitP50, r.WaitP90, r.WaitP99},
		"wait calls/visitor-minute": r.WaitCallsPerMinute(), "far calls/visitor-minute": r.FarCallsPerMinute(), "far fills": r.FarFills,
		"from snapshot": r.FromSnapshot, "fills": r.Fills, "peak calls/s": r.PeakCallsPerSecond, "calls/admitted": r.CallsPerAdmitted(),
		"redis bytes": r.RedisMemory, "redis peak": r.RedisPeak, "simulated": r.Duration, "took": r.Elapsed,
	}
}

func TestCapacityRoom(t *testing.T) {
	rep := runOurs(t, crowd(1500, 100), `"max_active_users":100`)
	if rep.Overshoot != 0 || rep.MaxLive > 100 {
		t.Errorf("live visitors reached %d with a capacity of 100", rep.MaxLive)
	}
	if rep.MaxHeld > 100 {
		t.Errorf("sessions plus held calls reached %d with a capacity of 100", rep.MaxHeld)
	}
	if rep.Inversions != 0 || rep.LostPlaces != 0 || rep.NeverAdmitted != 0 {
		t.Errorf("FIFO: %d overtaken, %d steady visitors lost their place, %d never got in", rep.Inversions, rep.LostPlaces, rep.NeverAdmitted)
	}
	// Live visitors, not the sessions the room holds: a visitor who went
	// idle holds a place until the inactivity timeout (a minute), and the
	// rest is called places inside their claim window.
	if rep.Utilisation < 0.8 || rep.Utilisation+rep.IdleHeld < 0.95 {
		t.Errorf("utilisation %.3f while visitors waited, %.3f held by visitors who left: want at least 0.8, and 0.95 together",
			rep.Utilisation, rep.IdleHeld)
	}
	if rep.Admitted < 1000 {
		t.Errorf("only %d of 1500 admitted (about 30%% leave before)", rep.Admitted)
	}
	want := map[string]float64{"join": 1, "poll": 1, "leave": 1}
	for kind, n := range want {
		if got := rep.CallsPer(kind); got != n {
			t.Errorf("%s: %.2f store calls a request, want %v", kind, got, n)
		}
	}
	// One renewal per heartbeat (20 s) with a request every 15 s: every
	// second request.
	if got := rep.CallsPer("session"); got < 0.4 || got > 0.6 {
		t.Errorf("session requests: %.2f store calls each, want about 0.5", got)
	}
}

func TestRateRoom(t *testing.T) {
	rep := runOurs(t, crowd(800, 0), `"new_users_per_minute":60,"burst":10`)
	if rep.MaxPerMinute > 60+10 || rep.MaxPerMinute < 50 {
		t.Errorf("%d called in one minute, want the rate of 60 (plus the burst of 10 at most)", rep.MaxPerMinute)
	}
	if rep.Inversions != 0 || rep.LostPlaces != 0 {
		t.Errorf("FIFO: %d overtaken, %d steady visitors lost their place", rep.Inversions, rep.LostPlaces)
	}
}

func TestRandomRoom(t *testing.T) {
	rep := runOurs(t, crowd(1000, 80), `"mode":"random","random_window":60,"max_active_users":80`)
	if rep.Overshoot != 0 || rep.MaxHeld > 80 {
		t.Errorf("capacity 80: max live %d, max held %d", rep.MaxLive, rep.MaxHeld)
	}
	if rep.LostPlaces != 0 {
		t.Errorf("%d steady visitors lost their place", rep.LostPlaces)
	}
	// Random order within each arrival minute means overtaking, by design.
	if rep.Inversions == 0 {
		t.Error("no visitor was overtaken: the order was not random")
	}
}

// TestModels checks that the models of the other designs behave as their
// descriptions say, on the same visitors as TestCapacityRoom.
func TestModels(t *testing.T) {
	cfg := crowd(1500, 100)
	tc, gate := Models(redistest.Start(t), redistest.Start(t), cfg)
	t.Run("two-counter", func(t *testing.T) {
		rep := runPolicy(t, cfg, tc, tc.Redis.Addr)
		if got := rep.CallsPer("session"); got != 1 {
			t.Errorf("%.2f calls per admitted visitor's request, want 1 (the cursor read)", got)
		}
		if got := rep.CallsPer("join"); got < 4 || got > 6 {
			t.Errorf("%.2f calls per join, want 4 to 6", got)
		}
		// A poll reads the cursor; one still waiting also counts itself in
		// the period, and one in a new period advances the cursor.
		if got := rep.CallsPer("poll"); got < 1.5 || got > 2.1 {
			t.Errorf("%.2f calls per poll, want about 2", got)
		}
		if rep.MaxHeld != -1 {
			t.Errorf("the two-counter design counted %d places held; it counts none", rep.MaxHeld)
		}
		if rep.Inversions != 0 {
			t.Errorf("%d inversions: the cursor admits in position order", rep.Inversions)
		}
	})
	t.Run("unordered gate", func(t *testing.T) {
		rep := runPolicy(t, cfg, gate, gate.Redis.Addr)
		if rep.MaxHeld > 100 || rep.Overshoot != 0 {
			t.Errorf("the gate held %d places (max live %d) with a capacity of 100", rep.MaxHeld, rep.MaxLive)
		}
		if rep.Inversions < 100 {
			t.Errorf("only %d visitors overtaken: whoever polls first should get in", rep.Inversions)
		}
		for _, kind := range []string{"join", "poll", "session", "leave"} {
			if got := rep.CallsPer(kind); got != 1 {
				t.Errorf("%s: %.2f calls a request, want 1", kind, got)
			}
		}
	})
}

// TestHeartbeat: pages that ping keep their visitors' sessions under an
// inactivity timeout shorter than the time between their requests (the
// 10 s room: a lapse would fail the run), and a shorter timeout gives the
// places of visitors who left silently back sooner: less capacity held by
// the gone, more by the living, for more store calls per visitor-minute.
func TestHeartbeat(t *testing.T) {
	var reps []Report
	for _, s := range HeartbeatScenarios {
		room, err := s.Room(`"max_active_users":100`)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.Config(crowd(1000, 100), room)
		if (cfg.Heartbeat > 0) != s.Heartbeat {
			t.Fatalf("%s: pings every %v", s.Name, cfg.Heartbeat)
		}
		addr := redistest.Start(t)
		rep := runPolicy(t, cfg, ours(t, addr, room, 0), addr)
		t.Logf("%s: utilisation %.3f, held by the gone %.3f, keep-alive calls per visitor-minute %.2f, pings %d",
			s.Name, rep.Utilisation, rep.IdleHeld, rep.KeepCallsPerMinute(), rep.Requests["heartbeat"])
		if rep.Overshoot != 0 {
			t.Errorf("%s: overshoot %d", s.Name, rep.Overshoot)
		}
		if (rep.Requests["heartbeat"] > 0) != s.Heartbeat {
			t.Errorf("%s: %d pings", s.Name, rep.Requests["heartbeat"])
		}
		reps = append(reps, rep)
	}
	for i := 1; i < len(reps); i++ {
		a, b := reps[i-1], reps[i]
		if !(b.IdleHeld < a.IdleHeld && b.Utilisation > a.Utilisation && b.KeepCallsPerMinute() > a.KeepCallsPerMinute()) {
			t.Errorf("%s after %s: held by the gone %.3f→%.3f, utilisation %.3f→%.3f, calls per visitor-minute %.2f→%.2f: want less, more, more",
				HeartbeatScenarios[i].Name, HeartbeatScenarios[i-1].Name, a.IdleHeld, b.IdleHeld, a.Utilisation, b.Utilisation,
				a.KeepCallsPerMinute(), b.KeepCallsPerMinute())
		}
	}
}

// TestSnapshotPOPs: the capacity room's visitors spread over 1, 10 and 50
// POPs, each with its own snapshot of the line, keep every exactness of
// today's edge (no overshoot, no inversion, no place lost, utilisation no
// lower), while polls far from the front cost a small fraction of today's
// one store call each.
func TestSnapshotPOPs(t *testing.T) {
	const capacity = 100
	cfg := crowd(1500, capacity)
	room, err := Room(`"max_active_users":100`)
	if err != nil {
		t.Fatal(err)
	}
	addr := redistest.Start(t)
	today := runPolicy(t, cfg, ours(t, addr, room, 0), addr)
	if got := today.FarCallsPerMinute(); got < 5.9 || got > 6.1 {
		t.Errorf("today: %.2f store calls per visitor-minute far from the front, want 6 (a poll every %v)", got, Refresh)
	}
	if today.FromSnapshot != 0 || today.Fills != 0 {
		t.Errorf("today's edge has no snapshot, yet %d polls were answered from one, %d filled", today.FromSnapshot, today.Fills)
	}
	for _, pops := range []int{1, 10, 50} {
		t.Run(fmt.Sprintf("%d POPs", pops), func(t *testing.T) {
			addr := redistest.Start(t)
			rep := runPolicy(t, cfg, ours(t, addr, room, pops), addr)
			if rep.Overshoot != 0 || rep.MaxHeld > capacity {
				t.Errorf("capacity %d: max live %d, max held %d", capacity, rep.MaxLive, rep.MaxHeld)
			}
			if rep.Inversions != 0 || rep.LostPlaces != 0 || rep.NeverAdmitted != 0 {
				t.Errorf("FIFO: %d overtaken, %d steady visitors lost their place, %d never got in", rep.Inversions, rep.LostPlaces, rep.NeverAdmitted)
			}
			// Concurrent calls within a batch reach the store in any order,
			// so two runs of one design differ by a few tenths of a point.
			if rep.Utilisation < today.Utilisation-0.005 {
				t.Errorf("utilisation %.4f, today %.4f", rep.Utilisation, today.Utilisation)
			}
			if rep.FromSnapshot < rep.Requests["poll"]/2 {
				t.Errorf("%d of %d polls answered from the snapshot", rep.FromSnapshot, rep.Requests["poll"])
			}
			// At most one fill per POP and TTL.
			if most := pops * int(rep.Duration/room.SnapshotTTL()+1); rep.Fills > most || rep.Fills == 0 {
				t.Errorf("%d snapshot fills in %v over %d POPs, want 1 to %d", rep.Fills, rep.Duration, pops, most)
			}
			// Far from the front, the calls that do not fill the POP's
			// snapshot are the store's look at a ticket once per
			// queue_timeout/3 (100 s: one poll in ten at most); the fills
			// are the POP's, shared by its visitors, and so cost less the
			// more visitors a POP has.
			own := perMinute(rep.FarCalls-rep.FarFills, rep.FarWaitMinutes)
			if own > 0.61 || own == 0 {
				t.Errorf("%.3f store calls per visitor-minute far from the front besides fills, want up to 0.6 (today %.2f)", own, today.FarCallsPerMinute())
			}
			if pops == 1 && rep.FarCallsPerMinute() >= 1 {
				t.Errorf("%.2f store calls per visitor-minute far from the front in one POP, want under 1", rep.FarCallsPerMinute())
			}
			if rep.TotalCalls() >= today.TotalCalls() || rep.WaitCallsPerMinute() >= today.WaitCallsPerMinute() {
				t.Errorf("%d store calls (today %d), %.2f per visitor-minute waiting (today %.2f)", rep.TotalCalls(), today.TotalCalls(),
					rep.WaitCallsPerMinute(), today.WaitCallsPerMinute())
			}
		})
	}
}
