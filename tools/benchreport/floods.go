package benchreport

import (
	"fmt"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// Flood is one bot flood beside the visitors of sim.FloodCrowd, played with
// the edge before and after issue 10's armour.
type Flood struct {
	Scenario      sim.FloodScenario
	Before, After sim.Report
}

// FloodsHeading opens the bot floods' section of BENCHMARKS.md.
const FloodsHeading = "## Bot floods"

// Floods renders the bot floods' section, which names its own command and
// date, as it may be written alone (see ReplaceSection).
func Floods(res Results) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	cfg := sim.FloodCrowd()
	horizon := sim.FloodHorizon
	w("%s", sectionHead(FloodsHeading, res, res.FloodsTook, "make bench-floods"))
	w("**Workload**: the simulator (`tools/sim`, virtual time, the real script on a fresh redis-server for each run) with %s visitors, %s of them in the first minute and the rest evenly over the next %s, in the room `{%s}` with the timings of `sim.Timings` (claim window 20 s, queue timeout 5 minutes); the visitors behave as in the flash crowd above (%.0f%% never come back after their first answer, %.0f%% give up while waiting, stays of %s to %s). The store is called one request at a time in event order, so the same seed gives the same visitors and the same answers: any difference between rows is the bots'. ",
		thousands(float64(cfg.Visitors)), thousands(float64(cfg.FlashCrowd)), cfg.Spread, sim.FloodRoom,
		cfg.NoShowJoin*100, cfg.NoShowWait*100, cfg.StayMin, cfg.StayMax)
	w("**Bots** arrive evenly over the first %s beside them. A bot sends the requests that get it a ticket and never polls: without cookies it sends one request; keeping cookies, it follows the one redirect it gets and stops there.\n\n", horizon)
	w("**Before** is the edge without the armour: every request without a pass is a store join that takes a ticket, with no limit per client. **After** is the armour as the simulator's driver models it (`sim.After`, `tools/sim/bots.go`): a request without a pass gets a signed arrival pass and a redirect with no store call, and only the request that comes back with that pass joins; joins are limited to %d per client address a minute (`joins_per_ip_per_minute`, Fastly's Edge Rate Limiting: a client over the limit is refused with 429 and kept in the penalty box for a minute). Each visitor has an address of their own. Before the armour, cookies change nothing: a bot's first request joins whatever it does next.\n\n",
		sim.After.JoinsPerIPPerMinute)
	w("| bots | edge | mean wait | p90 wait | visitors admitted in %s | places taken by bots | bot joins reaching the store | joins refused (429) | store calls (bots') |\n", horizon)
	w("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range res.Floods {
		for _, e := range []struct {
			name string
			r    sim.Report
		}{{"before", f.Before}, {"after", f.After}} {
			r := e.r
			w("| %s | %s | %s | %s | %s of %s | %s | %s | %s | %s (%s) |\n", f.Scenario.Name, e.name,
				r.WaitMean.Round(time.Second), r.WaitP90.Round(time.Second),
				thousands(float64(r.AdmittedBy(horizon))), thousands(float64(r.Visitors)), botPlaces(r),
				thousands(float64(r.BotJoins)), thousands(float64(r.Limited)),
				thousands(float64(r.TotalCalls())), thousands(float64(r.BotCalls)))
		}
	}
	w("\n- **mean wait**, **p90 wait**: arrival (the first request) to admission, over the visitors who had to wait.\n")
	w("- **visitors admitted in %s**: as the simulator's sample at that moment saw them, of all the visitors, those who leave before their turn included.\n", horizon)
	w("- **places taken by bots**: bots let in at their join (a session nobody uses, held until the inactivity timeout of %s) plus bots' tickets called in (each holds a place for the claim window, 20 s, and is never claimed); the called tickets are read from the script's set of called tickets every %s, shorter than the claim window, so none is missed.\n", sim.Inactivity, cfg.Sample)
	w("- Bots that keep the arrival pass and come back still join, as many as the per-address limit lets through: the limit bounds what such a flood takes, it does not make it free.\n")
	w("- **store calls**: every call the visitors' and the bots' requests made (the Upstash bill); the bots' share in brackets.\n")
	return b.String()
}

// botPlaces is a report's places taken by bots, and of what kind.
func botPlaces(r sim.Report) string {
	if r.BotPlaces() == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s sessions, %s called)", thousands(float64(r.BotPlaces())),
		thousands(float64(r.BotSessions)), thousands(float64(r.BotCalled)))
}

// sectionHead opens a section that may be written alone: its heading,
// the command and date that measured it, how long it took (when known),
// and alone, the make target that plays it alone.
func sectionHead(heading string, res Results, took time.Duration, alone string) string {
	head := fmt.Sprintf("%s\n\nMeasured by `%s` on %s", heading, res.Command, res.Date.UTC().Format("2006-01-02 15:04 MST"))
	if took > 0 {
		head += fmt.Sprintf(" (this section took %s)", took.Round(time.Second))
	}
	return head + ". `" + alone + "` plays this section alone and rewrites it in place.\n\n"
}
