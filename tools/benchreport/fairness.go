package benchreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/sim"
)

// FairnessHeading opens the fairness section of BENCHMARKS.md.
const FairnessHeading = "## Fairness"

// Fairness renders the fairness section: the order each room served its
// visitors in, and the chi-square test of the draw. It names its own
// command and date, as it may be written alone (see WriteSections).
func Fairness(res Results) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("%s", sectionHead(FairnessHeading, res, res.FairnessTook, "make bench-fairness"))
	cfg := res.FairnessWorkload
	if len(res.Fairness) > 0 {
		w("**Workload**: the flash crowd above (%s visitors, %s of them in the first minute and the rest evenly over the next %s, places for %s at once, the same seed) in the simulator, the real script on a fresh redis-server for each room, in the room `{\"max_active_users\": %s}` with the timings of `sim.Timings`, in each calling order. ",
			thousands(float64(cfg.Visitors)), thousands(float64(cfg.FlashCrowd)), cfg.Spread, thousands(float64(cfg.Capacity)), strconv.Itoa(cfg.Capacity))
		w("The scheduled event's pre-queue opens as the crowd starts arriving and is drawn %s later (the room's `events` setting): everyone who arrives before is in the draw, everyone after queues behind it.\n\n", eventPrequeue(res.Fairness))
	}
	w("| scenario | group | tickets called (visitors admitted) | Kendall tau distance: calling order | Kendall tau distance: admissions | chi-square / dof / 0.1%% critical value | what it means |\n")
	w("|---|---|---:|---:|---:|---:|---|\n")
	for _, f := range res.Fairness {
		for i, p := range f.Parts {
			w("| %s | %s | %s (%s) | %s | %s | – | %s |\n", f.Scenario.Name, p.Name, thousands(float64(p.Called.Items)), thousands(float64(p.Admitted.Items)),
				tauText(p.Called), tauText(p.Admitted), partMeaning(f, i))
		}
	}
	for _, d := range res.Draws {
		source, group := "the draw: package draw", fmt.Sprintf("%d tickets × %s keys (%s different draws)", d.Tickets, thousands(float64(d.Draws)), thousands(float64(d.Distinct)))
		if d.Store {
			source, group = "the draw: the store's script on Redis", fmt.Sprintf("%d tickets × %s draws (%s different)", d.Tickets, thousands(float64(d.Draws)), thousands(float64(d.Distinct)))
		}
		w("| %s | %s | – | – | – | %.1f / %d / %.1f | %s |\n", source, group, d.Stat, d.DOF, d.Critical, drawMeaning(d))
	}
	w("\n- **Kendall tau distance**: the share of pairs of visitors that two orders put the other way round: 0 when they agree, 1 when one is the other reversed, about 0.5 for an order drawn at random. It is counted over every pair in O(n log n). Orders are taken %s at a time (the slots of simulated time whose requests reach the store together): two requests of the same slot are a tie, neither came first, and a pair tied in either order is not compared.\n", batchOf(cfg))
	w("- **calling order**: the order the store handed out tickets against the order it called them in (read from the script's set of called tickets before each slot's first request, and from the answers that let a visitor in): the room's own order, with every ticket called, whether or not its holder came back. In a first-come room anything above 0 is a fairness defect.\n")
	w("- **admissions**: the order visitors first reached the room against the order they got in, over the visitors admitted: what visitors saw. A called visitor gets in at their next poll (every %s near the front, every %s further back), so visitors called a poll apart may swap.\n",
		queue.FastPoll, sim.Refresh)
	if len(res.Fairness) > 0 {
		var costs []string
		for _, f := range res.Fairness {
			costs = append(costs, fmt.Sprintf("%s %.2f", f.Scenario.Name, f.Report.CallsPerAdmitted()))
		}
		w("- **store calls per admitted visitor** in these runs: %s. Visitors poll as the edge's queue page tells them (the gate's `Place.PollEvery`): every %s once the first ticket of their calling group is near the front, which in a random-order window and in a drawn pre-queue is the whole group at once; in the pre-queue before the draw, every refresh (%s) and at the start.\n",
			strings.Join(costs, "; "), queue.FastPoll, sim.Refresh)
	}
	w("- **chi-square**: Pearson's statistic of the table counting how often each ticket of a drawn pre-queue was called at each place, against every place equally likely, with (tickets − 1)² degrees of freedom; a fair draw exceeds the 0.1%% critical value once in a thousand. *package draw* computes the order the script uses for many keys like the store's (64 hex digits; `draw.ChiSquare`); *different draws* counts the different round keys among them (each round key is its own hash of the key: when all followed from one number below a prime under 2^26, fewer than 2^25 draws were possible, and among 100,000 keys some repeated another's order); *the store's script on Redis* makes real draws, each in a room of its own with its own key: the tickets join a paused room's pre-queue and, once it is drawn, the operator's admit calls them one at a time, which shows the order; each order is also compared with the one package draw computes from the key the store revealed.\n")
	return b.String()
}

// eventPrequeue is how long the measured event's pre-queue lasted.
func eventPrequeue(fs []sim.Fairness) string {
	for _, f := range fs {
		if f.Scenario.Prequeue > 0 {
			return f.Scenario.Prequeue.String()
		}
	}
	return "(no event measured)"
}

// batchOf is cfg's slot of simulated time.
func batchOf(cfg sim.Config) string {
	if cfg.Batch == 0 {
		return "one slot"
	}
	return cfg.Batch.String()
}

// tauText is a distance, said exactly when no pair was discordant.
func tauText(t sim.Tau) string {
	d := t.Distance()
	switch {
	case math.IsNaN(d):
		return "n/a (no pair compared)"
	case t.Discordant == 0:
		return fmt.Sprintf("0 (of %s pairs)", thousands(float64(t.Compared)))
	case d < 0.001:
		// Two significant digits, and the pairs themselves.
		digits := 1 - int(math.Floor(math.Log10(d)))
		return fmt.Sprintf("%s (%s of %s pairs)", strconv.FormatFloat(d, 'f', digits, 64), thousands(float64(t.Discordant)), thousands(float64(t.Compared)))
	}
	return strconv.FormatFloat(d, 'f', 4, 64)
}

// partMeaning says in a line what group i of f's distances mean.
func partMeaning(f sim.Fairness, i int) string {
	p := f.Parts[i]
	defect := fmt.Sprintf("**%s pairs called out of arrival order: a fairness defect.**", thousands(float64(p.Called.Discordant)))
	switch {
	case f.Scenario.Prequeue > 0 && i == 0:
		return "arriving early in the pre-queue buys nothing: an order drawn at random is 0.5."
	case f.Scenario.Prequeue > 0:
		later := fmt.Sprintf("%s tickets from after the start were called before a pre-queue ticket", thousands(float64(f.LaterCalledFirst)))
		var out []string
		if f.LaterCalledFirst > 0 {
			out = append(out, "**"+later+": a defect.**")
		}
		if p.Called.Discordant > 0 {
			out = append(out, defect)
		}
		if len(out) > 0 {
			return strings.Join(out, " ")
		}
		return fmt.Sprintf("%s (the whole pre-queue goes first); then first come, first served; %s arrivals after the start got in before the pre-queue's last (by their polls' timing).",
			later, thousands(float64(f.LaterAdmittedFirst)))
	case f.Scenario.Order != "":
		return "reordered only within each window of arrivals: a random order of everyone would be 0.5."
	case p.Called.Discordant > 0:
		return defect
	}
	return "first come, first served exactly: no ticket called before an earlier one."
}

// drawMeaning says in a line what a chi-square figure means.
func drawMeaning(d sim.DrawFairness) string {
	s := "within the critical value: no ticket likelier than another at any place."
	if !d.Fair() {
		s = "**above the critical value: some places are likelier than others for some tickets.**"
	}
	if d.Store {
		if d.Agreed == d.Draws {
			s += fmt.Sprintf(" Every one of the %s orders was the one package draw computes from the revealed key.", thousands(float64(d.Draws)))
		} else {
			s += fmt.Sprintf(" **Only %s of the %s orders were the one package draw computes from the revealed key.**", thousands(float64(d.Agreed)), thousands(float64(d.Draws)))
		}
	}
	return s
}
