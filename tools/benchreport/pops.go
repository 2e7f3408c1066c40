package benchreport

import (
	"fmt"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// POPRun is the flash crowd of one size played under today's edge, the
// snapshot of the line spread over each number of POPs (sim.POPCounts),
// and the two models.
type POPRun struct {
	Workload sim.Config
	// Today is the waiting room without snapshots, Snapshots the runs
	// with them (sim.POPCounts's order), Models the two models'.
	Today     sim.Report
	Snapshots []sim.Report
	Models    []sim.Report
	// TTL is the room's snapshot TTL; QueueTimeout its queue timeout.
	TTL, QueueTimeout time.Duration
	// Took is the time the section's runs took (those it shares with the
	// flash crowd's section included).
	Took time.Duration
}

// Issue 14's goals for the snapshot.
const (
	GoalFarPerMinute = 0.5
	GoalPerAdmitted  = 5
)

// popHeading starts the headings of the POPs' snapshot's sections.
const popHeading = "## Waiting's cost: a snapshot of the line per POP, "

// POPHeading opens the section of the POPs' snapshot at a workload of
// visitors; each size has its own, so that each can be rewritten alone.
func POPHeading(visitors int) string {
	return popHeading + thousands(float64(visitors)) + " visitors"
}

// POPSectionName names the POPs' snapshot's section at a workload of
// visitors in BENCHMARKS.md: make bench-pops-large owns the largest.
func POPSectionName(visitors int) string {
	if visitors >= 1000000 {
		return "pops-large"
	}
	return "pops"
}

// POPSection renders p's section, which names its own command and date.
func POPSection(res Results, p POPRun) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	cfg := p.Workload
	owner, _ := SectionOwner(POPSectionName(cfg.Visitors))
	alone := "make " + owner
	w("%s", sectionHead(POPHeading(cfg.Visitors), res, p.Took, alone))
	w("**Workload**: the flash crowd above (`sim.Crowd`, one seed) at %s visitors, %s of them in the first minute and the rest over the next %s, places for %s at once; the queue page refreshes every %s, the queue timeout is %s and the snapshot TTL %s (`snapshot_ttl`). ",
		thousands(float64(cfg.Visitors)), thousands(float64(cfg.FlashCrowd)), cfg.Spread, thousands(float64(cfg.Capacity)), cfg.Refresh, p.QueueTimeout, p.TTL)
	w("**With the snapshot**, the visitors are spread over the POPs (visitor *i* in POP *i* mod *N*), each POP keeping its own snapshot of the line as the edge keeps one in each POP's cache: every request goes through the POP's `queue.Gate` (`tools/sim/ours.go`), as at the edge: a visitor the store saw less than a third of the queue timeout ago (by the time their ticket pass carries) is answered from the POP's snapshot with no store call when they are far from the front; the first poll to find the snapshot older than the TTL fills it with its own store call (a poll's answer holds the line; the POP's concurrent polls wait for that one fill, as the cache collapses them); any other poll asks the store, as today. Joins, admitted visitors' requests and beacons are as today. Each row runs on its own fresh redis-server.\n\n")

	all := append(append([]sim.Report{p.Today}, p.Snapshots...), p.Models...)
	w("| design | store calls per visitor-minute waiting, far from the front | of which snapshot fills | store calls per visitor-minute waiting, all polls | store calls per admitted visitor | of which polls | peak store calls per second | store calls, total | polls answered from a snapshot | capacity overshoot | FIFO inversions | places lost | utilisation while visitors wait | time waited, p90 |\n")
	w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range all {
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Policy, fixed2(r.FarCallsPerMinute()),
			fixed2(ratioOf(float64(r.FarFills), r.FarWaitMinutes)), fixed2(r.WaitCallsPerMinute()), fixed2(r.CallsPerAdmitted()),
			fixed2(ratioOf(float64(r.Calls["poll"]), float64(r.Admitted))), count(float64(r.PeakCallsPerSecond)), count(float64(r.TotalCalls())),
			count(float64(r.FromSnapshot)), count(float64(r.Overshoot)), count(float64(r.Inversions)), count(float64(r.LostPlaces)),
			percent(r.Utilisation), r.WaitP90.Round(time.Second))
	}

	w("\n### Ratios: each design of the waiting room ÷ today's and ÷ each model\n\n")
	w("| metric | design | ÷ %s |", p.Today.Policy)
	for _, m := range p.Models {
		w(" ÷ %s |", m.Policy)
	}
	w("\n|---|---|---:|%s\n", strings.Repeat("---:|", len(p.Models)))
	for _, m := range popMetrics {
		for _, r := range append([]sim.Report{p.Today}, p.Snapshots...) {
			w("| %s | %s | %s |", m.name, r.Policy, ratioText(m.value(r), m.value(p.Today)))
			for _, o := range p.Models {
				w(" %s |", ratioText(m.value(r), m.value(o)))
			}
			w("\n")
		}
	}

	w("\n**Issue 14's goals**, at most %.1f store calls per visitor-minute waiting far from the front and at most %d per admitted visitor:\n\n", GoalFarPerMinute, GoalPerAdmitted)
	for _, r := range p.Snapshots {
		w("- %s: %s far from the front (%s), %s per admitted visitor (%s).\n", r.Policy, fixed2(r.FarCallsPerMinute()),
			goal(r.FarCallsPerMinute() <= GoalFarPerMinute), fixed2(r.CallsPerAdmitted()), goal(r.CallsPerAdmitted() <= GoalPerAdmitted))
	}
	seen := p.QueueTimeout / 3
	w("\nWhat bounds them: far from the front, a visitor's own store calls are the store's look at their ticket once a third of the queue timeout (%s), so that an abandoned ticket is still passed over: one poll in %d at a %s refresh, %.2f calls per visitor-minute for a visitor who waits long, whatever the POPs (here %s, as many waits are shorter); each POP adds one fill (a poll that would otherwise have been answered from the snapshot) per TTL, shared by the visitors it serves, so the fills' share grows with the POPs and shrinks with the crowd. A queue timeout of %s would halve the first. ",
		seen, int(seen/cfg.Refresh), cfg.Refresh, float64(time.Minute)/float64(seen), ownFar(p.Snapshots), 2*p.QueueTimeout)
	others := ratioOf(float64(p.Today.TotalCalls()-p.Today.Calls["poll"]), float64(p.Today.Admitted))
	w("Per admitted visitor, the snapshot takes out most of the polls' calls, not the others: here the joins come to %s store calls per admitted visitor, the admitted visitors' requests (a session renewal once a heartbeat while they stay) to %s and the departure beacons to %s, %s without a single poll",
		fixed2(perAdmitted(p.Today, "join")), fixed2(perAdmitted(p.Today, "session")+perAdmitted(p.Today, "heartbeat")),
		fixed2(perAdmitted(p.Today, "leave")), fixed2(others))
	if others > GoalPerAdmitted {
		w(": more than the goal on their own, so no snapshot of the line can reach it on this workload; the renewals are what a session costs to keep (see the heartbeat's section)")
	}
	w(".\n\n")
	w("- **far from the front**: a poll answered \"wait\" covers the time to the next poll; it is far from the front when the gate would answer its visitor's new pass from a snapshot of the line the store just answered with (today's edge is split the same way, at the default TTL), and for the models when the two-counter queue's cursor is more than two of its advances behind the position, or, in the unordered gate, whenever the visitor is still waiting (it has no order, so no front). The column divides those polls' store calls (their snapshot fills included) by those minutes.\n")
	w("- **all polls**: every poll's store calls (those that let the visitor in included) ÷ all the minutes waited between polls. Joins are left out of both, as they are arrivals rather than waiting; they count per admitted visitor.\n")
	w("- **peak store calls per second**: the most store calls made in one second of simulated time, by every kind of request: the load the database must take at the crowd's worst moment.\n")
	w("- **polls answered from a snapshot**: polls that made no store call; **of which snapshot fills**: the calls, among those far from the front, of polls that found their POP's snapshot stale and filled it.\n")
	return b.String()
}

// popMetrics are the section's ratio rows.
var popMetrics = []metric{
	{name: "store calls per visitor-minute waiting, far from the front", value: func(r sim.Report) float64 { return r.FarCallsPerMinute() }},
	{name: "store calls per visitor-minute waiting, all polls", value: func(r sim.Report) float64 { return r.WaitCallsPerMinute() }},
	{name: "store calls per admitted visitor", value: func(r sim.Report) float64 { return r.CallsPerAdmitted() }},
	{name: "peak store calls per second", value: func(r sim.Report) float64 { return float64(r.PeakCallsPerSecond) }},
}

// ownFar is the store calls about their own tickets (fills left out) per
// visitor-minute far from the front, in each of runs.
func ownFar(runs []sim.Report) string {
	var out []string
	for _, r := range runs {
		out = append(out, fixed2(ratioOf(float64(r.FarCalls-r.FarFills), r.FarWaitMinutes)))
	}
	return strings.Join(out, ", ")
}

// perAdmitted is the store calls requests of kind made per visitor admitted.
func perAdmitted(r sim.Report, kind string) float64 {
	return ratioOf(float64(r.Calls[kind]), float64(r.Admitted))
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func goal(met bool) string {
	if met {
		return "goal met"
	}
	return "goal missed"
}
