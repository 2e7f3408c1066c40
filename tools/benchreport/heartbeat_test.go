package benchreport

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

func TestHeartbeatSection(t *testing.T) {
	today := sim.Report{Utilisation: 0.843, IdleHeld: 0.136, StayMinutes: 100, WaitMean: 465 * time.Second,
		Calls: map[string]int{"session": 181, "poll": 1000}, Requests: map[string]int{"session": 400}}
	kept := sim.Report{Utilisation: 0.949, IdleHeld: 0.024, StayMinutes: 100,
		Calls: map[string]int{"heartbeat": 1196}, Requests: map[string]int{"session": 400, "heartbeat": 1500}}
	res := Results{Date: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Command: "make bench-heartbeat",
		HeartbeatWorkload: sim.Crowd(1000, 200, 75, 40*time.Minute),
		Heartbeats: []Heartbeat{{Scenario: sim.HeartbeatScenarios[0], Report: today},
			{Scenario: sim.HeartbeatScenarios[2], Report: kept, Every: 4 * time.Second}}}
	md := HeartbeatSection(res)
	for _, want := range []string{
		HeartbeatHeading + "\n\nMeasured by `make bench-heartbeat` on 2026-11-23 10:00 UTC.",
		"| no heartbeat, inactivity 60 s (today) | no heartbeat | 84.3% | 13.6% | 1.81 | 4.00 | 7m45s | 0s | 1,181 |",
		"| heartbeat, inactivity 10 s | 4s | 94.9% | 2.4% | 11.96 | 19.00 | 0s | 0s | 1,196 |",
		"1,000 visitors, 200 of them in the first minute",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
}
