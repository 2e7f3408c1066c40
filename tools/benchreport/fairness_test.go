package benchreport

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// fairRun is a measured room: parts of (discordant, compared) pairs.
func fairRun(s sim.FairnessScenario, laterFirst int, parts ...[2]int64) sim.Fairness {
	f := sim.Fairness{Scenario: s, LaterCalledFirst: laterFirst, LaterAdmittedFirst: 3,
		Report: sim.Report{Admitted: 100, Calls: map[string]int{"poll": 1234}}}
	names := []string{"everyone"}
	if s.Prequeue > 0 {
		names = []string{"pre-queue", "arrivals after the start"}
	}
	for i, p := range parts {
		tau := sim.Tau{Items: 1000, Discordant: p[0], Compared: p[1]}
		f.Parts = append(f.Parts, sim.FairnessPart{Name: names[i], Called: tau, Admitted: sim.Tau{Items: 900, Discordant: 2 * p[0], Compared: p[1]}})
	}
	return f
}

func TestFairnessSection(t *testing.T) {
	fifo, random, event := sim.FairnessScenarios[0], sim.FairnessScenarios[1], sim.FairnessScenarios[2]
	tests := []struct {
		name   string
		res    Results
		want   []string
		unwant []string
	}{
		{"as expected", Results{
			Fairness: []sim.Fairness{
				fairRun(fifo, 0, [2]int64{0, 499500}),
				fairRun(random, 0, [2]int64{12345, 499500}),
				fairRun(event, 0, [2]int64{249000, 499500}, [2]int64{0, 1000}),
			},
			Draws: []sim.DrawFairness{
				{Tickets: 10, Draws: 100000, Stat: 85.25, DOF: 81, Critical: 124.84},
				{Store: true, Tickets: 10, Draws: 1000, Stat: 70.4, DOF: 81, Critical: 124.84, Agreed: 1000},
			}},
			[]string{
				"| first come, first served | everyone | 1,000 (900) | 0 (of 499,500 pairs) | 0 (of 499,500 pairs) | – | first come, first served exactly: no ticket called before an earlier one. |",
				"| random order, 60 s windows | everyone | 1,000 (900) | 0.0247 | 0.0494 | – | reordered only within each window",
				"| scheduled event, 5-minute pre-queue drawn | pre-queue | 1,000 (900) | 0.4985 | 0.9970 | – | arriving early in the pre-queue buys nothing",
				"| scheduled event, 5-minute pre-queue drawn | arrivals after the start | 1,000 (900) | 0 (of 1,000 pairs) | 0 (of 1,000 pairs) | – | 0 tickets from after the start were called before a pre-queue ticket (the whole pre-queue goes first); then first come, first served; 3 arrivals",
				"| the draw: package draw | 10 tickets × 100,000 keys | – | – | – | 85.2 / 81 / 124.8 | within the critical value",
				"| the draw: the store's script on Redis | 10 tickets × 1,000 draws | – | – | – | 70.4 / 81 / 124.8 | within the critical value: no ticket likelier than another at any place. Every one of the 1,000 orders was the one package draw computes",
				"drawn 5m0s later", "first come, first served 12.34;",
			},
			[]string{"a fairness defect.**", "a defect.**", "**above", "**Only"}},
		{"defects", Results{
			Fairness: []sim.Fairness{
				fairRun(fifo, 0, [2]int64{7, 499500}),
				fairRun(event, 2, [2]int64{249000, 499500}, [2]int64{0, 1000}),
			},
			Draws: []sim.DrawFairness{
				{Tickets: 10, Draws: 100000, Stat: 300, DOF: 81, Critical: 124.84},
				{Store: true, Tickets: 10, Draws: 1000, Stat: 70.4, DOF: 81, Critical: 124.84, Agreed: 999},
			}},
			[]string{
				"| first come, first served | everyone | 1,000 (900) | 0.0000 | 0.0000 | – | **7 pairs called out of arrival order: a fairness defect.** |",
				"**2 tickets from after the start were called before a pre-queue ticket: a defect.**",
				"| 300.0 / 81 / 124.8 | **above the critical value: some places are likelier than others for some tickets.** |",
				"**Only 999 of the 1,000 orders were the one package draw computes from the revealed key.**",
			},
			nil},
		{"no pair compared", Results{Fairness: []sim.Fairness{fairRun(fifo, 0, [2]int64{0, 0})}},
			[]string{"| n/a (no pair compared) |"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.res.Command, tc.res.Date, tc.res.FairnessTook = "make bench-fairness", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), 90*time.Second
			tc.res.FairnessWorkload = sim.Crowd(1000, 200, 100, 10*time.Minute)
			md := Fairness(tc.res)
			if !strings.HasPrefix(md, FairnessHeading+"\n\nMeasured by `make bench-fairness` on 2026-11-22 10:00 UTC (this section took 1m30s).") {
				t.Errorf("section opens %.120q", md)
			}
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("lacks %q", want)
				}
			}
			for _, unwant := range tc.unwant {
				if strings.Contains(md, unwant) {
					t.Errorf("says %q", unwant)
				}
			}
			if t.Failed() {
				t.Log(md)
			}
		})
	}
}
