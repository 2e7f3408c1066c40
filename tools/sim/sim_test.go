package sim

import (
	"context"
	"testing"
	"time"

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
	return runPolicy(t, cfg, NewOurs(addr, room), addr)
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
		rep := runPolicy(t, cfg, NewOurs(addr, room), addr)
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
