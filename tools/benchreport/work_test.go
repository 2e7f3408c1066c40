package benchreport

import (
	"strings"
	"testing"
	"time"
)

// TestWorkSection renders two throttling rates: medians and p90s by
// nearest rank, the bot's CPU per place from its rate, the ratio of the
// slowest browser's median to it, and the goals against the 4× run.
func TestWorkSection(t *testing.T) {
	rung := func(bits int, ms ...float64) WorkRung {
		h := make([]float64, len(ms))
		for i := range h {
			h[i] = ms[i] * 100 // 100,000 hashes a second
		}
		return WorkRung{Bits: bits, Ms: ms, Hashes: h}
	}
	w := WorkTimes{Browser: "Chromium 140", Runs: []WorkRun{
		{Throttle: 1, Rungs: []WorkRung{rung(16, 100, 200, 300), rung(20, 1000, 2000, 3000)}},
		{Throttle: 4, Rungs: []WorkRung{rung(16, 400, 800, 1200), rung(20, 4000, 6000, 9000)}},
	}}
	text := WorkSection(Results{Date: time.Now(), Command: "make bench-work"}, w, BotRate{HashesPerSecond: 65536, Toolchain: "go1.26"}, time.Minute)
	for _, want := range []string{
		"| 16 | 65,536 | 200ms | 300ms | 100,000 | 800ms | 1.2s | 100,000 | 1s | 0.80× |",
		"| 20 | 1,048,576 | 2s | 3s | 100,000 | 6s | 9s | 100,000 | 16s | 0.38× |",
		"Each cell is 3 searches.",
		"at normal pressure (16 bits: four minutes of line in a room whose top is 20) on a 4× throttled CPU within 1s: 800ms (met)",
		"at the highest rung (20 bits) on a 4× throttled CPU within 5s: 6s (**not met**)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the section lacks %q:\n%s", want, text)
		}
	}
}
