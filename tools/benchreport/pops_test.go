package benchreport

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

func TestPOPSection(t *testing.T) {
	waiting := func(name string, far, fills, calls, admitted, peak, snapshot int) sim.Report {
		return sim.Report{Policy: name, Admitted: admitted, Utilisation: 0.83, PeakCallsPerSecond: peak, FromSnapshot: snapshot,
			FarCalls: far, FarFills: fills, FarWaitMinutes: 100, WaitMinutes: 200,
			Calls: map[string]int{"poll": calls, "join": admitted}, Requests: map[string]int{"poll": 1000}}
	}
	p := POPRun{Workload: sim.Crowd(100000, 20000, 7500, 40*time.Minute), TTL: time.Second, QueueTimeout: 5 * time.Minute,
		Today: waiting("edge waiting room", 600, 0, 1200, 100, 900, 0),
		Snapshots: []sim.Report{waiting("edge waiting room, snapshot, 1 POP", 40, 10, 300, 100, 90, 900),
			waiting("edge waiting room, snapshot, 50 POPs", 80, 50, 340, 100, 120, 880)},
		Models: []sim.Report{waiting("two-counter (model)", 1200, 0, 2400, 100, 1800, 0), waiting("unordered gate (model)", 600, 0, 1200, 100, 900, 0)}}
	res := Results{Date: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Command: "make bench-pops", POPs: []POPRun{p}}
	md := POPSection(res, p)
	for _, want := range []string{
		POPHeading(100000) + "\n\nMeasured by `make bench-pops` on 2026-11-23 10:00 UTC. `make bench-pops` plays this section alone",
		"| edge waiting room | 6.00 | 0.00 | 6.00 | 13.00 | 12.00 | 900 | 1,300 | 0 | 0 | 0 | 0 | 83.0% | 0s |",
		"| edge waiting room, snapshot, 1 POP | 0.40 | 0.10 | 1.50 | 4.00 | 3.00 | 90 | 400 | 900 |",
		"| store calls per visitor-minute waiting, far from the front | edge waiting room, snapshot, 1 POP | 0.07× | 0.03× | 0.07× |",
		"| peak store calls per second | edge waiting room, snapshot, 50 POPs | 0.13× | 0.07× | 0.13× |",
		"- edge waiting room, snapshot, 1 POP: 0.40 far from the front (goal met), 4.00 per admitted visitor (goal met).",
		"- edge waiting room, snapshot, 50 POPs: 0.80 far from the front (goal missed), 4.40 per admitted visitor (goal met).",
		"once a third of the queue timeout (1m40s), so that an abandoned ticket is still passed over: one poll in 10 at a 10s refresh, 0.60 calls per visitor-minute for a visitor who waits long, whatever the POPs (here 0.30, 0.30, as many",
		"here the joins come to 1.00 store calls per admitted visitor, the admitted visitors' requests (a session renewal once a heartbeat while they stay) to 0.00 and the departure beacons to 0.00, 1.00 without a single poll.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if POPSectionName(100000) != "pops" || POPSectionName(1000000) != "pops-large" {
		t.Errorf("the sections are named %q and %q", POPSectionName(100000), POPSectionName(1000000))
	}
}
