package load

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgequeue/waitingroom/tools/devstack"
)

// TestPhases runs a small load through the real wasm and checks every
// phase did what it says: half the joins admitted, one store call per
// queue page, none on the admitted path.
func TestPhases(t *testing.T) {
	const visitors = 200
	rep, err := Run(context.Background(), Options{Wasm: devstack.ServiceWasm(filepath.Join("..", "..")), Manifest: filepath.Join("..", "..", "fastly.toml"),
		CacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache"), Visitors: visitors, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != 3 || rep.WasmBytes == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range rep.Phases {
		t.Logf("%s: %d requests, %.1f/s, p50 %v, p99 %v, CPU %v a request, %d store calls, %v",
			p.Kind, p.Requests, p.PerSecond(), p.P50, p.P99, p.CPUPerRequest(), p.StoreCalls, p.Outcomes)
		if p.P50 <= 0 || p.P99 < p.P50 || p.CPU <= 0 {
			t.Errorf("%s: p50 %v, p99 %v, CPU %v", p.Kind, p.P50, p.P99, p.CPU)
		}
	}
	join, queuePage, admitted := rep.Phases[0], rep.Phases[1], rep.Phases[2]
	if join.Outcomes["admitted"] != visitors/2 || join.Outcomes["queued"] != visitors/2 {
		t.Errorf("joins: %v, want half admitted and half queued", join.Outcomes)
	}
	// A join is one script call; an instance that finds the script not
	// loaded yet makes one more.
	if join.StoreCalls < visitors || join.StoreCalls > visitors+16 {
		t.Errorf("%d store calls for %d joins", join.StoreCalls, visitors)
	}
	if queuePage.Requests != visitors/2 || queuePage.StoreCalls < queuePage.Requests || queuePage.StoreCalls > queuePage.Requests+16 {
		t.Errorf("queue pages: %d requests, %d store calls", queuePage.Requests, queuePage.StoreCalls)
	}
	if admitted.Requests != visitors/2 || admitted.StoreCalls != 0 {
		t.Errorf("admitted path: %d requests made %d store calls, want none", admitted.Requests, admitted.StoreCalls)
	}
}
