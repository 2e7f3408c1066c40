package benchreport

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// WorkHeading heads the proof of work's section.
const WorkHeading = "## The door's proof of work: a phone's search against a bot's"

// WorkTimes is what make bench-work measured of the work page's search
// in Chromium (tools/suites/pagetest, TestWorkSearchTimes), one run per
// CPU throttling rate.
type WorkTimes struct {
	Browser string
	Runs    []WorkRun
}

// WorkRun is the searches at one throttling rate (1: this machine's CPU).
type WorkRun struct {
	Throttle float64
	Rungs    []WorkRung
}

// WorkRung is the searches of one rung: each one's time, as the page
// measured it, and the hashes it tried.
type WorkRung struct {
	Bits   int
	Ms     []float64
	Hashes []float64
}

// BotRate is a bot's hash rate: challenge.Solve natively, on one core.
type BotRate struct {
	HashesPerSecond float64
	Toolchain       string
}

// The rungs the goals name: the ladder of a room whose top is 20
// has its base at 14; 16 is four minutes of line, "normal pressure", and
// 20 the top.
const (
	workNormal = 16
	workTop    = 20
)

// WorkSection renders the proof of work's section.
func WorkSection(res Results, w WorkTimes, bot BotRate, took time.Duration) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("%s", sectionHead(WorkHeading, res, took, "make bench-work"))
	p("The work page's search (templates/work.js) in %s, headless, on this machine, served the work page as the edge renders it (its Content-Security-Policy, its worker), at each rung: each search a fresh seed, timed by the page itself from its script's start to the nonce found (data-ms), with the hashes it tried. *1×* is the search as visitors' browsers run it, in its worker, on this machine's CPU. *4×* throttles the tab's CPU four times (DevTools' CPU throttling), as the issue measures a mid-range phone; DevTools slows the page's own thread and not a worker's, so that run takes the worker away and the page searches on its own thread (its fallback), a slice at a time. A bot's cost is `challenge.Solve` natively (%s, one core): %s hashes a second on this machine, so a place at a rung costs it the rung's expected hashes (2^bits) over that rate, in CPU-seconds.\n\n",
		w.Browser, bot.Toolchain, thousands(bot.HashesPerSecond))
	p("| bits | expected hashes |")
	for _, r := range w.Runs {
		p(" Chromium %s×: median | p90 | hashes/s |", trimFloat(r.Throttle))
	}
	p(" a bot's CPU per place | the slowest browser's median ÷ the bot's |\n|---:|---:|")
	for range w.Runs {
		p("---:|---:|---:|")
	}
	p("---:|---:|\n")
	for _, bits := range workBits(w) {
		expected := math.Ldexp(1, bits)
		botSeconds := expected / bot.HashesPerSecond
		p("| %d | %s |", bits, thousands(expected))
		var slowest float64
		for _, r := range w.Runs {
			rung, ok := r.rung(bits)
			if !ok {
				p(" – | – | – |")
				continue
			}
			med := percentileOf(rung.Ms, 50)
			slowest = max(slowest, med)
			p(" %s | %s | %s |", msText(med), msText(percentileOf(rung.Ms, 90)), thousands(rung.rate()))
		}
		p(" %s | %s |\n", msText(botSeconds*1000), ratioX(slowest/1000, botSeconds))
	}
	p("\nEach cell is %d searches. The hashes a search takes are geometric (a fresh seed each time), so a median is about 0.7 of the expected hashes' time and a p90 about 2.3 of it; the hashes a second include the page's start of its worker, which weighs on the lowest rungs.\n\n", w.samples())
	p("### Goals\n\n")
	if r, ok := w.slowest(); ok {
		for _, g := range []struct {
			bits  int
			name  string
			limit float64
		}{{workNormal, "at normal pressure (16 bits: four minutes of line in a room whose top is 20)", 1000}, {workTop, "at the highest rung (20 bits)", 5000}} {
			rung, ok := r.rung(g.bits)
			if !ok {
				continue
			}
			med := percentileOf(rung.Ms, 50)
			p("- the median search %s on a %s× throttled CPU within %s: %s (%s)\n", g.name, trimFloat(r.Throttle), msText(g.limit), msText(med), met(med <= g.limit))
		}
	}
	return b.String()
}

// workBits are the rungs measured, in order.
func workBits(w WorkTimes) []int {
	var bits []int
	for _, r := range w.Runs {
		for _, g := range r.Rungs {
			if !slices.Contains(bits, g.Bits) {
				bits = append(bits, g.Bits)
			}
		}
	}
	slices.Sort(bits)
	return bits
}

func (r WorkRun) rung(bits int) (WorkRung, bool) {
	for _, g := range r.Rungs {
		if g.Bits == bits && len(g.Ms) > 0 {
			return g, true
		}
	}
	return WorkRung{}, false
}

// slowest is the run at the highest throttling rate: the phone's.
func (w WorkTimes) slowest() (WorkRun, bool) {
	if len(w.Runs) == 0 {
		return WorkRun{}, false
	}
	return slices.MaxFunc(w.Runs, func(a, b WorkRun) int { return int(a.Throttle - b.Throttle) }), true
}

// samples is the searches each cell holds (the fewest).
func (w WorkTimes) samples() int {
	n := math.MaxInt
	for _, r := range w.Runs {
		for _, g := range r.Rungs {
			n = min(n, len(g.Ms))
		}
	}
	if n == math.MaxInt {
		return 0
	}
	return n
}

// rate is the rung's hashes a second, over all its searches.
func (g WorkRung) rate() float64 {
	var h, ms float64
	for i := range g.Ms {
		h, ms = h+g.Hashes[i], ms+g.Ms[i]
	}
	if ms == 0 {
		return 0
	}
	return h / ms * 1000
}

// percentileOf is the p-th percentile of xs (nearest rank).
func percentileOf(xs []float64, p int) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(float64(p)/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// msText words ms as a duration rounded to its scale.
func msText(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// trimFloat writes f without trailing zeros.
func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}
