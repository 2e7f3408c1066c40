package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/redistest"
)

// fairnessCrowd is a small flash crowd for the fairness scenarios: 2,000
// visitors, 400 in the first minute and the rest over 20, places for 150.
func fairnessCrowd() Config { return Crowd(2000, 400, 150, 20*time.Minute) }

// runFairness plays s on a fresh redis-server.
func runFairness(t *testing.T, cfg Config, s FairnessScenario) Fairness {
	t.Helper()
	f, err := RunFairness(context.Background(), cfg, s, redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Parts {
		t.Logf("%s, %s: called %+v (%.4f), admitted %+v (%.4f)", s.Name, p.Name, p.Called, p.Called.Distance(), p.Admitted, p.Admitted.Distance())
	}
	t.Logf("later called first %d, later admitted first %d; %+v", f.LaterCalledFirst, f.LaterAdmittedFirst, summary(f.Report))
	return f
}

// TestFairness measures each scenario's order on a small crowd: a first
// come, first served room calls tickets exactly in the order it handed
// them out; random windows reorder some; a drawn pre-queue is called in an
// order unrelated to arrival, and everyone after it strictly later.
func TestFairness(t *testing.T) {
	cfg := fairnessCrowd()
	fifo, random, event := FairnessScenarios[0], FairnessScenarios[1], FairnessScenarios[2]
	if fifo.Order != "" || fifo.Prequeue != 0 || random.Order == "" || event.Prequeue == 0 || event.Order != "" {
		t.Fatalf("scenarios changed: %+v", FairnessScenarios)
	}
	t.Run("fifo", func(t *testing.T) {
		f := runFairness(t, cfg, fifo)
		if len(f.Parts) != 1 {
			t.Fatalf("%d parts, want 1", len(f.Parts))
		}
		p := f.Parts[0]
		if p.Called.Discordant != 0 || p.Called.Items < 1000 || p.Called.Compared == 0 {
			t.Errorf("called order %+v: want no discordant pair among at least 1,000 tickets", p.Called)
		}
		// Visitors claim their call at their next poll, so a few are
		// overtaken by a neighbour; few.
		if d := p.Admitted.Distance(); !(d < 0.005) {
			t.Errorf("admission order %.4f from arrival order, want under 0.005", d)
		}
	})
	t.Run("random", func(t *testing.T) {
		p := runFairness(t, cfg, random).Parts[0]
		if d := p.Called.Distance(); !(d > 0.01 && d < 0.3) {
			t.Errorf("called order %.4f from arrival order, want reordered within windows only (0.01 to 0.3)", d)
		}
	})
	t.Run("event", func(t *testing.T) {
		f := runFairness(t, cfg, event)
		if len(f.Parts) != 2 {
			t.Fatalf("%d parts, want 2", len(f.Parts))
		}
		pre, later := f.Parts[0], f.Parts[1]
		// With 400-odd tickets the distance of a random order is 0.5
		// give or take 0.02.
		if d := pre.Called.Distance(); pre.Called.Items < 400 || math.Abs(d-0.5) > 0.08 {
			t.Errorf("the pre-queue: %d tickets called %.4f from arrival order, want at least 400 at about 0.5", pre.Called.Items, d)
		}
		if d := pre.Admitted.Distance(); math.Abs(d-0.5) > 0.08 {
			t.Errorf("the pre-queue's admissions %.4f from arrival order, want about 0.5", d)
		}
		if later.Called.Discordant != 0 || later.Called.Items < 500 {
			t.Errorf("after the start: called order %+v, want first come, first served among at least 500", later.Called)
		}
		if f.LaterCalledFirst != 0 {
			t.Errorf("%d tickets from after the start were called before some of the pre-queue", f.LaterCalledFirst)
		}
	})
}

// TestDrawFairness tests the draw both ways on a small scale: package
// draw's order over many keys and the store's real draws, whose every
// order must be the one package draw computes from the revealed key. The
// keys are fixed, so the figures are too.
func TestDrawFairness(t *testing.T) {
	keyed := KeyedDrawFairness(5, 20000)
	onRedis, err := StoreDrawFairness(context.Background(), redistest.Start(t), 5, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []DrawFairness{keyed, onRedis} {
		t.Logf("%+v", d)
		if d.DOF != 16 || d.Critical != ChiSquareCritical(16, Significance) || !(d.Stat > 0) {
			t.Errorf("%+v: want 16 degrees of freedom, the 0.1%% critical value and a figure", d)
		}
		if !d.Fair() {
			t.Errorf("chi-square %.1f above the critical value %.1f", d.Stat, d.Critical)
		}
	}
	if onRedis.Agreed != 100 || !onRedis.Store || keyed.Store {
		t.Errorf("%d of 100 store draws agreed with package draw", onRedis.Agreed)
	}
}

func TestStoreDrawFairnessRefusesBadSizes(t *testing.T) {
	for _, c := range []struct{ tickets, draws int }{{1, 10}, {0, 10}, {MaxDrawTickets + 1, 1}, {10, 0}, {10, -1}} {
		if _, err := StoreDrawFairness(context.Background(), "127.0.0.1:1", c.tickets, c.draws); err == nil {
			t.Errorf("%d draws of %d tickets: no error", c.draws, c.tickets)
		}
	}
}
