package benchreport

import (
	"fmt"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// Heartbeat is one room of sim.HeartbeatScenarios played on the heartbeat
// workload.
type Heartbeat struct {
	Scenario sim.HeartbeatScenario
	Report   sim.Report
	// Every is how often its pages pinged (0: they did not).
	Every time.Duration
}

// HeartbeatHeading opens the heartbeat's section of BENCHMARKS.md.
const HeartbeatHeading = "## The heartbeat: readers' places and utilisation"

// HeartbeatSection renders the heartbeat's section, which names its own
// command and date, as it may be written alone (see WriteSections).
func HeartbeatSection(res Results) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	cfg := res.HeartbeatWorkload
	w("%s", sectionHead(HeartbeatHeading, res, res.HeartbeatTook, "make bench-heartbeat"))
	w("**Workload**: the simulator (`tools/sim`, virtual time, the real script on a fresh redis-server for each row) with %s visitors, %s of them in the first minute and the rest evenly over the next %s, places for %s at once (`max_active_users`), the other timings of `sim.Timings` but the inactivity timeout, which each row sets. The visitors are the same in every row (one seed): %.0f%% never come back after their first answer, %.0f%% give up while waiting; those admitted stay %s to %s and load a page every %s; half of them leave with the departure beacon, half silently (a closed tab, or a hidden one: a hidden page stops pinging, so to the room both are gone), and count as live until the moment they leave. ",
		thousands(float64(cfg.Visitors)), thousands(float64(cfg.FlashCrowd)), cfg.Spread, thousands(float64(cfg.Capacity)),
		cfg.NoShowJoin*100, cfg.NoShowWait*100, cfg.StayMin, cfg.StayMax, cfg.Activity)
	w("**With the heartbeat**, each page runs the heartbeat script (`/_wr/heartbeat.js`), which pings `/_wr/heartbeat` every `next_seconds` (a third of the inactivity timeout, rounded up) while the page is visible, counted from the page's load; the ping a script sends as it loads is not played, as it follows the request that loaded the page and so never calls the store. A ping keeps the session as a request does (`queue.Gate.Keep` shares `Gate.Decide`'s renewal): no store call inside the room's heartbeat, one when due. In the last row the timeout (10 s) is shorter than the time between a visitor's page loads (%s): without the heartbeat, readers would lose their place between two pages (the simulator fails a run in which an active visitor's session lapses).\n\n", cfg.Activity)
	w("| room | pings every | utilisation while visitors wait | capacity held by visitors who left | keep-alive store calls per admitted visitor-minute | edge requests per admitted visitor-minute | mean wait | p90 wait | store calls, total |\n")
	w("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, h := range res.Heartbeats {
		r := h.Report
		every := "no heartbeat"
		if h.Every > 0 {
			every = h.Every.String()
		}
		requests := 0.0
		if r.StayMinutes > 0 {
			requests = float64(r.Requests["session"]+r.Requests["heartbeat"]) / r.StayMinutes
		}
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", h.Scenario.Name, every, percent(r.Utilisation), percent(r.IdleHeld),
			fixed2(r.KeepCallsPerMinute()), fixed2(requests), r.WaitMean.Round(time.Second), r.WaitP90.Round(time.Second),
			thousands(float64(r.TotalCalls())))
	}
	w("\n- **utilisation while visitors wait**: live visitors ÷ capacity, averaged over the samples (every %s) taken while anyone waited, as in the flash crowd above. What keeps it below 100%%: places held by visitors who left, and called visitors' places held for the claim window (20 s), among them those of visitors who gave up while waiting.\n", cfg.Sample)
	w("- **capacity held by visitors who left**: the sessions the store counts less the visitors still on the site, ÷ capacity, averaged over the same samples: a silent departure holds its place until the inactivity timeout; a beacon frees it once the pass it ended would have had to ask the store (a heartbeat).\n")
	w("- **keep-alive store calls per admitted visitor-minute**: the store calls admitted visitors' page loads and pings made (session renewals), ÷ the minutes they stayed: the heartbeat's price in Upstash commands.\n")
	w("- **edge requests per admitted visitor-minute**: page loads and pings through the edge (Compute requests), ÷ the same minutes; the origin sees only the page loads.\n")
	w("- **mean wait**, **p90 wait**: arrival to admission of the visitors who had to wait; places given back sooner serve the line sooner.\n")
	return b.String()
}
