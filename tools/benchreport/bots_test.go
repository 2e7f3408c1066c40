package benchreport

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// TestBotsSection renders a defence's runs without bots and with the
// heaviest flood: the goal is met within 10% and not beyond it, a
// visitor not admitted shows as a wait beyond the horizon, and the cost
// of a place at each rung follows the bots' rate.
func TestBotsSection(t *testing.T) {
	run := func(d sim.Defence, bots sim.Botnet, p90 time.Duration, censored bool) sim.DistributedReport {
		cfg := sim.DistributedCrowd(d, bots)
		return sim.DistributedReport{Config: cfg, Scale: 10, Visitors: 3000, Admitted: 2900, WaitP50: p90 / 2, WaitP90: p90, Censored90: censored,
			BotTickets: 100, BotCPU: 12.5}
	}
	none, heavy := sim.BotLoads[0], sim.BotLoads[len(sim.BotLoads)-1]
	runs := []sim.DistributedReport{
		run(sim.Defences[0], none, 4*time.Minute, false),
		run(sim.Defences[0], heavy, 0, true),
		run(sim.Defences[1], none, 4*time.Minute, false),
		run(sim.Defences[1], heavy, 4*time.Minute+20*time.Second, false),
	}
	text := BotsSection(Results{Date: time.Now(), Command: "make bench-bots"}, runs, BotRate{HashesPerSecond: 1 << 20, Toolchain: "go1.26"}, time.Minute)
	for _, want := range []string{
		"| per-address limit | " + heavy.Name + " | 0s | > 20m0s | 2,900 of 3,000 | 0 | 0 | 100 | 50 |",
		"| 20 | 1,048,576 | 1s | 4.19s | 760ms |",
		"- per-address limit: with " + heavy.Name + ", the visitors' p90 wait is > 20m0s against 4m0s without bots (–): within 10%: **not met**",
		"- + network and AS limits: with " + heavy.Name + ", the visitors' p90 wait is 4m20s against 4m0s without bots (1.08×): within 10%: met",
		"| 125ms |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the section lacks %q:\n%s", want, text)
		}
	}
}
