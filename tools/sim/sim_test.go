package sim

import (
	"context"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/resp"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// flashCrowd is a flash crowd then a steady stream, with 30% of visitors
// leaving before they are served, as the admission issue describes.
func flashCrowd(visitors int, room string) Config {
	r, err := queue.ParseRoom("sim", []byte(room))
	if err != nil {
		panic(err)
	}
	return Config{
		Visitors: visitors, FlashCrowd: visitors / 2, Spread: 10 * time.Minute, Room: r,
		StayMin: time.Minute, StayMax: 4 * time.Minute, Activity: 15 * time.Second,
		NoShowJoin: 0.15, NoShowWait: 0.15, Sample: 5 * time.Second, Seed: 1,
	}
}

func runSim(t testing.TB, cfg Config) Report {
	t.Helper()
	addr := redistest.Start(t)
	st := &store.Upstash{URL: "http://upstash.local", Token: redistest.Token, RandomKey: "sim",
		Transport: native.InProcess{Handler: upstashdev.New(addr, redistest.Token)}, Timeout: 5 * time.Second}
	rep, err := Run(context.Background(), cfg, st, "sim", resp.NewPool(addr, 4))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// windows are the room settings both simulated rooms share.
const windows = `"paths":["/"],"refresh_seconds":10,"claim_window":20,"inactivity_timeout":60,"queue_timeout":300`

func TestCapacityRoom(t *testing.T) {
	rep := runSim(t, flashCrowd(1500, `{"max_active_users":100,`+windows+`}`))
	t.Logf("%+v", summary(rep))
	if rep.Overshoot != 0 || rep.MaxActive > 100 {
		t.Errorf("live sessions reached %d with a capacity of 100", rep.MaxActive)
	}
	if rep.MaxHeld > 100 {
		t.Errorf("sessions plus held calls reached %d with a capacity of 100", rep.MaxHeld)
	}
	if rep.Inversions != 0 || rep.LostPlaces != 0 {
		t.Errorf("FIFO: %d overtaken, %d steady visitors lost their place", rep.Inversions, rep.LostPlaces)
	}
	if rep.Utilisation < 0.98 {
		t.Errorf("utilisation %.3f while visitors waited, want at least 0.98", rep.Utilisation)
	}
	if rep.Admitted < 1000 {
		t.Errorf("only %d of 1500 admitted (about 30%% leave before)", rep.Admitted)
	}
}

func TestRateRoom(t *testing.T) {
	rep := runSim(t, flashCrowd(800, `{"new_users_per_minute":60,"burst":10,`+windows+`}`))
	t.Logf("%+v", summary(rep))
	if rep.MaxPerMinute > 60+10 {
		t.Errorf("%d called in one minute, over the rate of 60 plus the burst of 10", rep.MaxPerMinute)
	}
	if rep.Inversions != 0 || rep.LostPlaces != 0 {
		t.Errorf("FIFO: %d overtaken, %d steady visitors lost their place", rep.Inversions, rep.LostPlaces)
	}
}

func summary(r Report) map[string]any {
	return map[string]any{
		"admitted": r.Admitted, "max active": r.MaxActive, "max held": r.MaxHeld, "overshoot": r.Overshoot,
		"inversions": r.Inversions, "lost": r.LostPlaces, "utilisation": r.Utilisation, "max/min": r.MaxPerMinute,
		"calls": r.Calls, "requests": r.Requests, "calls/request": r.CallsPerRequest(),
		"wait p50/p90/p99": []time.Duration{r.WaitP50, r.WaitP90, r.WaitP99},
		"redis bytes":      r.RedisMemory, "redis growth": r.RedisGrowth, "simulated": r.Duration,
	}
}

func TestRandomRoom(t *testing.T) {
	rep := runSim(t, flashCrowd(1000, `{"mode":"random","random_window":60,"max_active_users":80,`+windows+`}`))
	t.Logf("%+v", summary(rep))
	if rep.Overshoot != 0 || rep.MaxHeld > 80 {
		t.Errorf("capacity 80: max active %d, max held %d", rep.MaxActive, rep.MaxHeld)
	}
	if rep.LostPlaces != 0 {
		t.Errorf("%d steady visitors lost their place", rep.LostPlaces)
	}
	// A called visitor's place stands empty until their next poll. In
	// random order nobody knows they are next, so nobody polls fast, and
	// utilisation is a little lower than first-come order's 98%.
	if rep.Utilisation < 0.96 {
		t.Errorf("utilisation %.3f while visitors waited, want at least 0.96", rep.Utilisation)
	}
	// Random order within each arrival minute means overtaking, by design.
	if rep.Inversions == 0 {
		t.Error("no visitor was overtaken: the order was not random")
	}
}
