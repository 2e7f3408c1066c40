package benchreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// ShardsHeading opens the section on sharded rooms in the simulator.
const ShardsHeading = "## One room as K shards: the flash crowd shard by shard"

// ShardRun is the flash crowd played in a room of Shards shards, under
// one design (today's edge, or the snapshot over POPs).
type ShardRun struct {
	Shards, POPs int
	Report       sim.Report
}

// Ceiling is one Redis core's calls a second for one room's script: which
// script (Name), and where the figure comes from.
type Ceiling struct {
	Name, From string
	PerSecond  float64
}

// ShardsRun is what make bench-shards measured.
type ShardsRun struct {
	Workload sim.Config
	// Room is the room's settings without its shards.
	Room string
	Runs []ShardRun
	// Ceilings are what each shard's peak is held against: this tree's
	// script's, then the baseline's, as far as known.
	Ceilings []Ceiling
	// Large is the flash crowd's size on paper (10,000,000).
	Large int
	// Took is the time the runs took.
	Took time.Duration
	// Command runs the crowd at 1,000,000 visitors.
	Command string
	// Measured are today's edge's peaks at 100,000 and 1,000,000 visitors
	// from the POPs' sections (POPPeaks), when both are there.
	Measured [2]int
}

// POPPeaks reads today's edge's peak store calls a second from the POPs'
// sections of doc: at 100,000 visitors (make bench-pops) and 1,000,000
// (make bench-pops-large); ok is false unless both are there.
func POPPeaks(doc string) (peaks [2]int, ok bool) {
	for i, name := range []string{"pops", "pops-large"} {
		col := -1
		for _, line := range strings.Split(SectionText(doc, name), "\n") {
			cells := tableCells(line)
			for j, c := range cells {
				if col < 0 && c == "peak store calls per second" {
					col = j
				}
			}
			if col >= 0 && len(cells) > col && cells[0] == "edge waiting room" {
				n, err := strconv.Atoi(strings.ReplaceAll(cells[col], ",", ""))
				if err != nil {
					return peaks, false
				}
				peaks[i] = n
				break
			}
		}
		if peaks[i] == 0 {
			return peaks, false
		}
	}
	return peaks, true
}

// ScriptCeilings read one core's ceiling from the script's section of doc
// (make bench-script), this tree's script's and then the baseline's; none
// when doc has no such figures. A ceiling is the lesser of two: the calls
// per Redis CPU second that polls far from the front saturate at, and
// those the costliest operation's Redis CPU per call allows, each the
// least over the line lengths. A crowd's calls are a mix (joins, polls
// near the front, claims, renewals), and a poll far from the front does
// no work of the line's, so it alone would overstate what a core serves.
func ScriptCeilings(doc string) []Ceiling {
	var out []Ceiling
	for _, s := range []struct{ column, name string }{{"this tree", "this tree's script"}, {"baseline", "the baseline's script"}} {
		c, ok := scriptCeiling(doc, s.column)
		if costly, found := costliestCeiling(doc, s.column); found && (!ok || costly.PerSecond < c.PerSecond) {
			c, ok = costly, true
		}
		if ok {
			c.Name = s.name
			out = append(out, c)
		}
	}
	return out
}

// scriptCeiling is the least figure of the script section's column of
// calls per Redis CPU second whose header names which.
func scriptCeiling(doc, which string) (c Ceiling, ok bool) {
	col := -1
	least := math.Inf(1)
	var at string
	for _, line := range strings.Split(SectionText(doc, "script"), "\n") {
		cells := tableCells(line)
		if col < 0 {
			for i, cell := range cells {
				if strings.Contains(cell, which) && strings.Contains(cell, "calls per Redis CPU second") {
					col = i
				}
			}
			continue
		}
		if len(cells) <= col {
			if len(cells) == 0 {
				col = -1 // the table ended
			}
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(cells[col], ",", ""), 64)
		if err != nil || v <= 0 {
			continue
		}
		if v < least {
			least, at = v, cells[0]
		}
	}
	if math.IsInf(least, 1) {
		return Ceiling{}, false
	}
	return Ceiling{PerSecond: least, From: fmt.Sprintf("the script's section of this file (`make bench-script`): calls per Redis CPU second of polls far from the front, the least over its line lengths (at %s waiting)", at)}, true
}

// costliestCeiling is the calls a second that the costliest operation's
// Redis CPU per call allows, in the script section's table of Redis CPU
// per call, at the line length where that is least: which is "this tree"
// (the columns headed "N waiting: this tree") or "baseline" (the column
// after each).
func costliestCeiling(doc, which string) (c Ceiling, ok bool) {
	var cols []int
	var heads []string
	worst := map[int]float64{}
	worstOp := map[int]string{}
	inTable := false
	for _, line := range strings.Split(SectionText(doc, "script"), "\n") {
		if strings.Contains(line, "Redis CPU per call, µs") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		cells := tableCells(line)
		if cols == nil {
			for i, cell := range cells {
				if strings.HasSuffix(cell, "waiting: this tree") {
					col := i
					if which == "baseline" {
						col = i + 1
					}
					cols, heads = append(cols, col), append(heads, strings.TrimSuffix(cell, ": this tree"))
				}
			}
			continue
		}
		if len(cells) == 0 {
			if len(worst) > 0 {
				break // the table ended
			}
			continue
		}
		for _, col := range cols {
			if col >= len(cells) {
				continue
			}
			v, err := strconv.ParseFloat(strings.ReplaceAll(cells[col], ",", ""), 64)
			if err == nil && v > worst[col] {
				worst[col], worstOp[col] = v, cells[0]
			}
		}
	}
	least := math.Inf(1)
	for i, col := range cols {
		if us := worst[col]; us > 0 && 1e6/us < least {
			least = 1e6 / us
			c.From = fmt.Sprintf("the script's section of this file (`make bench-script`): one second of Redis CPU over the costliest operation's Redis CPU per call (%s, %.1f µs at %s), the least over its line lengths", worstOp[col], us, heads[i])
		}
	}
	if math.IsInf(least, 1) {
		return Ceiling{}, false
	}
	c.PerSecond = math.Round(least)
	return c, true
}

// tableCells are the cells of a Markdown table's row, or none.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	cells := strings.Split(line[1:len(line)-1], "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// design names a run's design.
func (r ShardRun) design() string {
	switch r.POPs {
	case 0:
		return "today's edge"
	case 1:
		return "snapshot, 1 POP"
	}
	return fmt.Sprintf("snapshot, %d POPs", r.POPs)
}

// ShardsSection renders the section on sharded rooms.
func ShardsSection(res Results, s ShardsRun) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	cfg := s.Workload
	w("%s", sectionHead(ShardsHeading, res, s.Took, "make bench-shards"))
	w("**Workload**: the flash crowd (`sim.Crowd`, one seed) at %s visitors, %s of them in the first minute and the rest over the next %s, places for %s at once, in the room `{%s,\"shards\":K}` with the timings of `sim.Timings` (refresh %s). ",
		thousands(float64(cfg.Visitors)), thousands(float64(cfg.FlashCrowd)), cfg.Spread, thousands(float64(cfg.Capacity)), s.Room, cfg.Refresh)
	if cfg.Visitors < 1000000 {
		var longest, all time.Duration
		for _, r := range s.Runs {
			longest, all = max(longest, r.Report.Elapsed), all+r.Report.Elapsed
		}
		w("**This is not the issue's 1,000,000-visitor crowd**: a run here took up to %s at %s visitors on this shared 2-core machine (%s for all %d), and a run's time grows with the visitors, so the same runs at 1,000,000 would take about %s; `%s` plays them. The 1,000,000-visitor figures below are this run's scaled by %s, on paper. ",
			longest.Round(time.Second), thousands(float64(cfg.Visitors)), all.Round(time.Second), len(s.Runs),
			(time.Duration(float64(all) * 1000000 / float64(cfg.Visitors))).Round(time.Minute), s.Command, fixed2(1000000/float64(cfg.Visitors)))
	}
	w("Each row is one run on a fresh redis-server, the real script through the production store client (`store.Upstash` over `tools/upstashdev`), in virtual time. A room of K > 1 shards runs as the edge runs it: its gates ask `store/shard`'s Store, all K shards on the one redis-server as K hash slots (`wr:{sim}`, `wr:{sim#1}`, …), each taking its share of the places; K = 1 is the room of one line, unsharded. Each request's store calls are counted at the shard that took them.\n\n")

	w("**One core's ceiling**, for one room's script:")
	for i, c := range s.Ceilings {
		if i > 0 {
			w(";")
		}
		w(" %s, %s calls a second, from %s", c.Name, thousands(c.PerSecond), c.From)
	}
	w(".\n\n")

	w("| K | design | peak calls/s, room | busiest shard's peak calls/s | each shard's peak |%s overshoot, origin | overshoot, places held | most places held | places lost | utilisation while visitors wait | idle while others wait | time waited, p90 | ran in |\n", s.headroomHeads())
	w("|---:|---|---:|---:|---|%s---:|---:|---:|---:|---:|---:|---:|---:|\n", strings.Repeat("---:|", len(s.Ceilings)))
	for _, r := range s.Runs {
		rep := r.Report
		var each []string
		for _, p := range rep.Shards.PeakPerSecond {
			each = append(each, thousands(float64(p)))
		}
		w("| %d | %s | %s | %s | %s |%s %d | %d | %s | %d | %s | %s | %s | %s |\n", r.Shards, r.design(), thousands(float64(rep.PeakCallsPerSecond)),
			thousands(float64(rep.Shards.BusiestPeak())), strings.Join(each, ", "), s.headrooms(float64(rep.Shards.BusiestPeak())),
			rep.Overshoot, rep.HeldOvershoot(), thousands(float64(rep.MaxHeld)), rep.LostPlaces, percent(rep.Utilisation), percent(rep.IdleElsewhere), rep.WaitP90.Round(time.Second), rep.Elapsed.Round(time.Second))
	}

	w("\n**Arrival order.** Pairs of steady visitors (who polled until admitted), the earlier arrival (by at least a batch, %s) admitted more than one poll (%s) after the later; the lag is the most any visitor was admitted after one who arrived later, the gap the most arrival time between the two of a pair counted. The bound is the one docs/rooms.md states (\"Sharded rooms\") and the end-to-end suite checks: (imbalance + a shard's burst) ÷ a shard's pace, plus the longest a place is held (the longest stay, %s, then the inactivity timeout: a shard that has just filled frees none before its first visitor leaves), plus one poll, where the imbalance is the most first joins one shard had received beyond another's over the run, and a shard's pace its share of the places over that hold.\n\n",
		cfg.Batch, cfg.Refresh, cfg.StayMax)
	w("| K | design | joins per shard | imbalance | bound | across shards: pairs | lag | gap | within the bound | within a shard: pairs | lag |\n")
	w("|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n")
	for _, r := range s.Runs {
		f := r.Report.Shards
		var joined []string
		for _, j := range f.Joined {
			joined = append(joined, thousands(float64(j)))
		}
		within := "yes"
		if f.Across.Lag > f.Bound {
			within = "**no**"
		}
		w("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Shards, r.design(), strings.Join(joined, ", "), thousands(float64(f.Imbalance)),
			f.Bound.Round(time.Second), thousands(float64(f.Across.Pairs)), f.Across.Lag.Round(100*time.Millisecond), f.Across.Gap.Round(100*time.Millisecond),
			within, thousands(float64(f.Within.Pairs)), f.Within.Lag.Round(100*time.Millisecond))
	}

	w("\n### Ratios to K = 1\n\n")
	w("| K | design | busiest shard's peak | peak, room | store calls, total | utilisation | time waited, p90 |\n")
	w("|---:|---|---:|---:|---:|---:|---:|\n")
	for _, r := range s.Runs {
		base, ok := s.one(r.POPs)
		if !ok {
			continue
		}
		a, o := r.Report, base.Report
		w("| %d | %s | %s | %s | %s | %s | %s |\n", r.Shards, r.design(),
			ratioX(float64(a.Shards.BusiestPeak()), float64(o.Shards.BusiestPeak())), ratioX(float64(a.PeakCallsPerSecond), float64(o.PeakCallsPerSecond)),
			ratioX(float64(a.TotalCalls()), float64(o.TotalCalls())), ratioX(a.Utilisation, o.Utilisation), ratioX(a.WaitP90.Seconds(), o.WaitP90.Seconds()))
	}

	s.busiestSecond(w)
	s.onPaper(w)
	s.goals(w)

	w("\n- **peak calls/s**: the most store calls the visitors' requests made in one second of simulated time, the room's (all shards) and each shard's; a shard's is what its one Redis core must serve.\n")
	w("- **headroom**: one core's ceiling ÷ the busiest shard's peak; below 1 the shard's core cannot keep up.\n")
	w("- **overshoot, origin**: the most visitors on the origin at once beyond the capacity, as the simulator counts them. **overshoot, places held**: the most sessions plus unclaimed calls the shards held together beyond the capacity, summed over the shards after every %s batch (each shard's latest answer, the most it answered when the batch called it) and at every %s sample (the room's stats); **most places held** is that sum's peak.\n", cfg.Batch, cfg.Sample)
	w("- **places lost**: steady visitors whose place was given away.\n")
	w("- **utilisation**: the mean of visitors on the origin ÷ the capacity, over the samples taken while visitors waited.\n")
	w("- **idle while others wait**: the places free in shards nobody waited in while visitors waited in another shard, ÷ the capacity, over the same samples: what the fixed split of the places costs (a room of one line has none). Each arrival is sent to the shorter of its two shards' lines in its POP's snapshots, the hash's when the POP has none (today's edge, without snapshots).\n")
	w("- **ran in**: the real time the run took.\n")
	return b.String()
}

// peakKinds are the kinds of request a peak second is told by, in the
// order the busiest second's table gives them.
var peakKinds = []string{"join", "poll", "session", "heartbeat", "leave"}

// busiestSecond writes what each design's busiest second was made of, at
// K = 1, and what the 1,000,000-visitor crowd's joins alone would leave of
// the headroom: a join is one store call a visitor cannot go without, so
// no poll or renewal answered without the store can raise the headroom
// above it.
func (s ShardsRun) busiestSecond(w func(string, ...any)) {
	var ones []ShardRun
	for _, r := range s.Runs {
		if r.Shards == 1 && r.Report.PeakSecond != nil {
			ones = append(ones, r)
		}
	}
	if len(ones) == 0 || len(s.Ceilings) == 0 {
		return
	}
	c := s.Ceilings[0]
	m := 1000000 / float64(s.Workload.Visitors)
	w("\n### What the busiest second is made of, K = 1\n\n")
	w("The store calls of the room's busiest second of simulated time, by the request that made them: a join (a newcomer's ticket), a poll (a waiting visitor's, one the POP's snapshot could not answer, a claim, or a snapshot's fill), a session (an admitted visitor's request that renewed the session), a heartbeat (an admitted page's ping that did) and a leave. The last column is the 1,000,000-visitor crowd's headroom against %s if its joins were its only calls (the joins × %s): every visitor's join is a store call, so no cheaper poll or renewal can take the headroom above it.\n\n", c.Name, fixed2(m))
	w("| design | busiest second |")
	for _, k := range peakKinds {
		w(" %s |", k)
	}
	w(" headroom at 1,000,000 visitors, joins alone |\n|---|---:|%s---:|\n", strings.Repeat("---:|", len(peakKinds)))
	for _, r := range ones {
		w("| %s | %s |", r.design(), thousands(float64(r.Report.PeakCallsPerSecond)))
		for _, k := range peakKinds {
			w(" %s |", thousands(float64(r.Report.PeakSecond[k])))
		}
		w(" %s |\n", headroom(c.PerSecond, float64(r.Report.PeakSecond["join"])*m))
	}
}

// one is the K = 1 run of the design with pops POPs.
func (s ShardsRun) one(pops int) (ShardRun, bool) {
	for _, r := range s.Runs {
		if r.Shards == 1 && r.POPs == pops {
			return r, true
		}
	}
	return ShardRun{}, false
}

// onPaper writes the crowds not played, scaled from the per-shard figures:
// the 1,000,000-visitor crowd at every K when the run was smaller, and the
// large crowd at the most shards.
func (s ShardsRun) onPaper(w func(string, ...any)) {
	cfg := s.Workload
	w("\n### On paper: larger crowds from the per-shard figures\n\n")
	w("The calls a request makes do not depend on the crowd's size (a poll, a join, a renewal are one store call each; the line's length changes what a call costs, not how many there are), and the crowd's shape is the same at every size (a fifth in the first minute, the rest over %s, places for 7.5%%), so the calls in each second grow with the visitors: a crowd *m* times the size makes *m* times the calls in the same second. A shard's peak at *m* times the crowd is its peak here × *m*. ", cfg.Spread)
	if m := s.Measured; m[0] > 0 {
		w("Measured, unsharded (the POPs' sections of this file): today's edge peaked at %s calls/s at 100,000 visitors and %s at 1,000,000, %s× for 10× the crowd. ",
			thousands(float64(m[0])), thousands(float64(m[1])), fixed2(float64(m[1])/float64(m[0])))
	}
	w("The hash spreads arrivals over the shards with an imbalance that grows as the square root of the arrivals, so the busiest shard's share of a larger crowd's calls is, if anything, nearer 1/K.\n\n")
	sizes := []int{1000000, s.Large}
	w("| visitors | first minute | K | design | peak calls/s, room | busiest shard's peak calls/s | arithmetic |%s\n", s.headroomHeads())
	w("|---:|---:|---:|---|---:|---:|---|%s\n", strings.Repeat("---:|", len(s.Ceilings)))
	for _, n := range sizes {
		if n <= cfg.Visitors {
			continue
		}
		m := float64(n) / float64(cfg.Visitors)
		for _, r := range s.Runs {
			if n == s.Large && r.Shards != maxShards(s.Runs) {
				continue
			}
			busiest := float64(r.Report.Shards.BusiestPeak()) * m
			w("| %s | %s | %d | %s | %s | %s | %s × %s |%s\n", thousands(float64(n)), thousands(float64(n/5)), r.Shards, r.design(),
				thousands(float64(r.Report.PeakCallsPerSecond)*m), thousands(busiest),
				thousands(float64(r.Report.Shards.BusiestPeak())), fixed2(m), s.headrooms(busiest))
		}
	}
}

// headroomHeads are the headroom columns' heads, one per ceiling.
func (s ShardsRun) headroomHeads() string {
	var b strings.Builder
	for _, c := range s.Ceilings {
		fmt.Fprintf(&b, " headroom, %s (ceiling ÷ busiest peak) |", c.Name)
	}
	return b.String()
}

// headrooms are the headroom cells of a busiest shard's peak.
func (s ShardsRun) headrooms(peak float64) string {
	var b strings.Builder
	for _, c := range s.Ceilings {
		fmt.Fprintf(&b, " %s |", headroom(c.PerSecond, peak))
	}
	return b.String()
}

// goals writes issue 25's goals for the simulator against the figures,
// each design's: the 1,000,000-visitor crowd at one shard with 4×
// headroom, the large crowd at the most shards within one core's ceiling
// (both on paper when not played at that size), no overshoot at any K,
// and cross-shard order within the bound.
func (s ShardsRun) goals(w func(string, ...any)) {
	if len(s.Ceilings) == 0 {
		return
	}
	c := s.Ceilings[0]
	w("\n### Issue 25's goals\n\n")
	for _, r := range s.Runs {
		scaled := func(n int) string {
			m := float64(n) / float64(s.Workload.Visitors)
			h := c.PerSecond / (float64(r.Report.Shards.BusiestPeak()) * m)
			how := "played"
			if m != 1 {
				how = "on paper"
			}
			return fmt.Sprintf("%.1f× (%s; %s)", h, how, met(h >= 4))
		}
		switch {
		case r.Shards == 1:
			w("- %s, the 1,000,000-visitor crowd at K = 1 with at least 4× headroom against %s: %s\n", r.design(), c.Name, scaled(1000000))
		case r.Shards == maxShards(s.Runs):
			m := float64(s.Large) / float64(s.Workload.Visitors)
			h := c.PerSecond / (float64(r.Report.Shards.BusiestPeak()) * m)
			w("- %s, the %s-visitor crowd at K = %d within each core's ceiling (%s): headroom %.1f× (on paper; %s)\n", r.design(), thousands(float64(s.Large)), r.Shards, c.Name, h, met(h >= 1))
		}
	}
	over, order := true, true
	for _, r := range s.Runs {
		over = over && r.Report.Overshoot == 0 && r.Report.HeldOvershoot() == 0
		order = order && r.Report.Shards.Across.Lag <= r.Report.Shards.Bound
	}
	w("- Overshoot 0 at every K (the origin's and the places held): %s\n", met(over))
	w("- Cross-shard order within the stated bound at every K: %s\n", met(order))
}

// met says whether a goal was met.
func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// maxShards is the most shards among runs.
func maxShards(runs []ShardRun) int {
	k := 0
	for _, r := range runs {
		k = max(k, r.Shards)
	}
	return k
}

// headroom is ceiling ÷ peak, as "4.2×".
func headroom(ceiling, peak float64) string {
	if peak <= 0 || ceiling <= 0 {
		return "–"
	}
	return strconv.FormatFloat(ceiling/peak, 'f', 1, 64) + "×"
}

// ratioX is a ÷ b, as "0.50×".
func ratioX(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fixed2(a/b) + "×"
}
