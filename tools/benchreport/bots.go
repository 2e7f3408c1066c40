package benchreport

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// BotsHeading heads the distributed bots' section.
const BotsHeading = "## Distributed bots at the door: limits per network, proof of work, decoy"

// BotsSection renders the distributed bots' section (issue 26) from runs,
// each defence (sim.Defences) against each load (sim.BotLoads), the bots'
// hash rate measured on this machine, and what the section took.
func BotsSection(res Results, runs []sim.DistributedReport, bot BotRate, took time.Duration) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	full := sim.DistributedCrowd(sim.Defences[len(sim.Defences)-1], sim.BotLoads[len(sim.BotLoads)-1])
	played, _ := full.Simulated()
	scale := max(full.Scale, 1)
	if len(runs) > 0 {
		scale = runs[0].Scale
		played = runs[0].Config
	}
	w("%s", sectionHead(BotsHeading, res, took, "make bench-bots"))
	w("**The event**, at full scale: %s real visitors, %s of them in the first minute and the rest evenly over the next %s, in a room that admits %s a minute (`new_users_per_minute`), with the timings of `sim.Timings` (refresh 10 s, claim window 20 s, queue timeout 5 minutes), played for %s of virtual time. ",
		thousands(float64(full.Visitors)), thousands(float64(full.FlashCrowd)), full.Spread, thousands(float64(full.PerMinute)), full.Horizon)
	w("Every visitor polls as the gate tells them until admitted, from an address and a /24 of their own, in one of %s autonomous systems drawn Zipf-like (s = 1.1, so a few ISPs bring most), and does the door's work at %s hashes a second: a mid-range phone's browser (the work page on its own thread with the CPU throttled 4×, the proof of work's section above).\n\n",
		thousands(float64(full.VisitorASes)), thousands(sim.PhoneHashRate))
	w("**The bots** (`sim.Botnet`): each address (one vCPU) tries a join a second, each try a new session that keeps its cookies: it follows the arrival's redirect, does the work the door asks at %s hashes a second (`challenge.Solve` on one core of this machine, measured by this run; %s), joins, and never comes back for its place; its address skips a try while its CPU is still busy. Addresses sit ten to a /24 (cloud ranges) and %s to an AS. A 429 stops the address for its Retry-After, a minute: a bot that kept trying would keep its own counter over the limit, since Edge Rate Limiting counts refused joins too. A decoy looks like a place, so the bot carries on, and the decoy's page does its way out (the room's top rung) on its own. In the decoy's rows %.0f%% of the bots' sessions are flagged as bad bots by bot detection, at each of their requests (an assumption; visitors are never flagged).\n\n",
		thousands(bot.HashesPerSecond), bot.Toolchain, thousands(float64(sim.BotLoads[len(sim.BotLoads)-1].Addresses/sim.BotLoads[len(sim.BotLoads)-1].ASes)), sim.BotLoads[len(sim.BotLoads)-1].Flagged*100)
	w("**The defences**, each adding to the one before: 30 joins per address a minute (`joins_per_ip_per_minute`, its default); %d per /24 and %s per AS a minute (`joins_per_network_per_minute`, `joins_per_as_per_minute`; %s is about what the crowd's biggest ISP brings in its busiest minute); `proof_of_work` %d (the ladder from %d bits at a minute of line to %d); the decoy line. Today a room with a proof of work always has its decoy line: the proof of work's rows leave it out by having the simulated edge report no client in the penalty box and no bad bot (no simulated client offers a failed or replayed solution).\n\n",
		full.PerNetwork, thousands(float64(full.PerAS)), thousands(float64(full.PerAS)), sim.Defences[2].ProofOfWork, max(sim.Defences[2].ProofOfWork-6, 1), sim.Defences[2].ProofOfWork)
	w("**How it is played** (`tools/sim/distributed.go`, `sim.RunDistributed`): every request goes through the real `queue.Gate` (the arrival, the work asked, the nonce, the join limits, the penalty box, the decoy, the join) in one POP whose snapshot of the line the ladder reads, with the edge's own join counter (`edge.NewJoinCounter`) over Edge Rate Limiting modelled in virtual time (exact counts of the last minute and one-minute penalty boxes, in one POP), and the real store script on a fresh redis-server for each run, one request at a time in event order. The work is priced, not hashed: a solve of b bits takes a geometric number of hashes of mean 2^b drawn from the run's seed, over the solver's rate; the nonces the gate checks are real, for a copy of the room whose `proof_of_work` is 1, after the real room's gate has said which rung it asks (the package's comment says why). ")
	w("**Scaled**: the event is played at 1/%d: %s visitors, %s admitted a minute, and the botnet sampled by whole autonomous systems (%s addresses in %d AS for the 10,000 a second, %s in %d for the 1,000), each AS with all its addresses, /24s and joins, so each address, network and AS meets its limits as at full scale while the line gets a tenth of the flood, as it gets a tenth of the crowd. The limits are not scaled. The bots' counts below are as played: ten times them is the full event's.\n\n",
		scale, thousands(float64(played.Visitors)), thousands(float64(played.PerMinute)),
		thousands(float64(sim.BotLoads[2].Addresses/scale)), sim.BotLoads[2].ASes/scale, thousands(float64(sim.BotLoads[1].Addresses/scale)), sim.BotLoads[1].ASes/scale)

	w("| defence | bots (full scale) | visitors' median wait | p90 wait | visitors admitted in %s | visitors' work, mean | bot tries a second, full scale | bot tickets | a minute, full scale | bot tickets called | bot joins refused (429) | bot requests decoyed | bots' CPU per ticket | store calls (bots') | run took |\n", full.Horizon)
	w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		w("| %s | %s | %s | %s | %s of %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n",
			r.Config.Defence.Name, r.Config.Bots.Name, waitText(r.WaitP50, r.Censored50, r.Config.Horizon), waitText(r.WaitP90, r.Censored90, r.Config.Horizon),
			thousands(float64(r.Admitted)), thousands(float64(r.Visitors)), secondsText(r.VisitorCPU/float64(max(r.Visitors, 1))),
			thousands(float64(r.BotTries*r.Scale)/r.Config.Horizon.Seconds()),
			thousands(float64(r.BotTickets)), thousands(float64(r.BotTickets*r.Scale)/r.Config.Horizon.Minutes()),
			thousands(float64(r.BotCalled)), thousands(float64(r.BotLimited)), thousands(float64(r.BotDecoyed)),
			secondsText(r.BotCPUPerTicket()), thousands(float64(r.StoreCalls)), thousands(float64(r.BotStoreCalls)), r.Elapsed.Round(time.Second))
	}
	w("\n- **waits**: from a visitor's first request to their admission, the work included, over every visitor (those who walk in too); a visitor not admitted within %s counts as waiting longer than anyone (\"> %s\").\n", full.Horizon, full.Horizon)
	w("- **bot tries a second**: the sessions the bots began, at full scale: fewer than the flood's rate, since an address waits out each 429's minute and skips a try while its CPU is busy. A bot that did not wait (not played) would keep its address's counter over the limit, since refused joins count, and get its 30 joins in the first minute and none after.\n")
	w("- **bot tickets**: bots' joins that took a place in line, as played and a minute at full scale (against the room's %s a minute); **called**: those the line called in (each an admission no visitor got, held for the claim window). A bot's ticket that is never polled is called like any other until it has gone unseen for the queue timeout, and passed over from then on: with a flood of tickets bigger than the rate, the line's front stays near the tickets issued a queue timeout ago (5 minutes here; 15 by default), calling the bots' tickets just short of it beside the visitors', so every visitor waits about the queue timeout or more, whatever the flood's size. Bots that polled their tickets would hold them, and cost visitors more.\n", thousands(float64(full.PerMinute)))
	w("- **bot requests decoyed**: %s.\n", decoyedWhy(runs))
	w("- **bots' CPU per ticket**: the work the bots did (their decoys' way out included), in CPU-seconds at their rate, over the tickets it got them; **visitors' work**: seconds of a phone's browser a visitor spent, on average.\n")
	if peak := maxASPeak(runs); peak > 0 {
		w("- The visitors' busiest AS joined %s times in its busiest minute as played, about %s at full scale, against the limit of %s per AS; visitors' joins over all runs: %s.\n",
			thousands(float64(peak)), thousands(float64(peak*scale)), thousands(float64(full.PerAS)), visitorsRefused(runs))
	}
	w("- Not modelled: Edge Rate Limiting counts per POP (a botnet spread over n POPs gets up to n times the network and AS limits) and may undercount by 10%%; addresses spread one to a /24 (residential proxies), which only the AS limit holds; bots that share visitors' networks or AS (their joins count against the visitors').\n\n")

	w("### What a place costs\n\n")
	w("The expected CPU of one solve at each rung (2^bits hashes): a bot at its measured native rate, against a visitor's browser (the proof of work's section: the work page on a phone's throttled thread at %s hashes a second, in its worker on a desktop at %s).\n\n", thousands(sim.PhoneHashRate), thousands(sim.DesktopHashRate))
	w("| bits | expected hashes | a bot's CPU-seconds | a phone's seconds | a desktop's seconds |\n|---:|---:|---:|---:|---:|\n")
	for bits := max(sim.Defences[2].ProofOfWork-6, 1); bits <= sim.Defences[2].ProofOfWork; bits++ {
		h := math.Ldexp(1, bits)
		w("| %d | %s | %s | %s | %s |\n", bits, thousands(h), secondsText(h/bot.HashesPerSecond), secondsText(h/sim.PhoneHashRate),
			secondsText(h/sim.DesktopHashRate))
	}
	w("\nA place costs a phone %s times what it costs a bot's core, a desktop %s times; the runs above say what the bots paid per ticket, the ladder's rungs and their decoys' way out together.\n",
		trimFloat(bot.HashesPerSecond/sim.PhoneHashRate), trimFloat(bot.HashesPerSecond/sim.DesktopHashRate))
	w("\n### Goal\n\n")
	botsGoal(&b, runs)
	return b.String()
}

// botsGoal words the goal: with the heaviest flood, the visitors'
// p90 wait within 10% of the same room's without bots, for each defence.
func botsGoal(b *strings.Builder, runs []sim.DistributedReport) {
	heaviest := sim.BotLoads[len(sim.BotLoads)-1].Name
	for _, d := range sim.Defences {
		var base, flood *sim.DistributedReport
		for i := range runs {
			r := &runs[i]
			switch {
			case r.Config.Defence.Name != d.Name:
			case r.Config.Bots.Addresses == 0:
				base = r
			case r.Config.Bots.Name == heaviest:
				flood = r
			}
		}
		if base == nil || flood == nil {
			continue
		}
		ok := !flood.Censored90 && !base.Censored90 && float64(flood.WaitP90) <= 1.1*float64(base.WaitP90)
		fmt.Fprintf(b, "- %s: with %s, the visitors' p90 wait is %s against %s without bots (%s): within 10%%: %s\n", d.Name, heaviest,
			waitText(flood.WaitP90, flood.Censored90, flood.Config.Horizon), waitText(base.WaitP90, base.Censored90, base.Config.Horizon), p90Ratio(*flood, *base), met(ok))
	}
}

// p90Ratio is flood's p90 wait over base's.
func p90Ratio(flood, base sim.DistributedReport) string {
	if flood.Censored90 || base.Censored90 || base.WaitP90 <= 0 {
		return "–"
	}
	return ratioX(float64(flood.WaitP90), float64(base.WaitP90))
}

// waitText words a wait percentile; a censored one fell on a visitor not
// admitted within the horizon.
func waitText(d time.Duration, censored bool, horizon time.Duration) string {
	if censored {
		return "> " + horizon.String()
	}
	return d.Round(time.Second).String()
}

// secondsText words s seconds at a precision fit for its size.
func secondsText(s float64) string {
	if s == 0 {
		return "0"
	}
	return msText(s * 1000)
}

// maxASPeak is the most joins a visitors' AS made in a minute over runs.
func maxASPeak(runs []sim.DistributedReport) int {
	n := 0
	for _, r := range runs {
		n = max(n, r.VisitorASPeak)
	}
	return n
}

// decoyedWhy words the requests decoyed over runs, by why.
func decoyedWhy(runs []sim.DistributedReport) string {
	by := map[string]int{}
	for _, r := range runs {
		for why, n := range r.Decoyed {
			by[why] += n
		}
	}
	if len(by) == 0 {
		return "none"
	}
	whys := make([]string, 0, len(by))
	for why := range by {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	parts := make([]string, len(whys))
	for i, why := range whys {
		parts[i] = fmt.Sprintf("%s for %q", thousands(float64(by[why])), why)
	}
	return "over all runs, " + strings.Join(parts, ", ") + " (the penalty box decoys a bot only when it tries again within the minute it is boxed for, which a bot that waits out the 429's Retry-After never does)"
}

// visitorsRefused words the visitors' joins refused and decoyed over runs.
func visitorsRefused(runs []sim.DistributedReport) string {
	limited, decoyed := 0, 0
	for _, r := range runs {
		limited += r.VisitorsLimited
		decoyed += r.VisitorsDecoyed
	}
	return fmt.Sprintf("%d refused, %d decoyed in all", limited, decoyed)
}
