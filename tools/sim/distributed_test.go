package sim

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/tools/redistest"
)

// smallDistributed is a five-minute event small enough for a test: 200
// visitors beside 60 bot addresses in 2 AS (three /24s each), each trying
// a join a second, with limits of 30 joins per address, 60 per network
// and 100 per AS a minute, so that the AS's is below its networks' sum.
func smallDistributed(d Defence) DistributedConfig {
	return DistributedConfig{
		Visitors: 200, FlashCrowd: 100, Spread: 3 * time.Minute, VisitorASes: 50, VisitorHashRate: PhoneHashRate,
		PerMinute: 60, PerAddress: 30, PerNetwork: 60, PerAS: 100, Defence: d,
		Bots:    Botnet{Name: "test", Addresses: 60, ASes: 2, PerNetwork: 10, PerSecond: 60, HashRate: BotHashRate},
		Horizon: 5 * time.Minute, Scale: 1, Seed: 7, Sample: 5 * time.Second,
	}
}

func runDistributed(t *testing.T, cfg DistributedConfig) DistributedReport {
	t.Helper()
	r, err := RunDistributed(context.Background(), cfg, redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: visitors %d admitted of %d, wait p50 %v p90 %v; bots: %d tries, %d tickets (%d called), %d limited, %d decoyed, %.1f CPU-s; refused %v",
		cfg.Defence.Name, r.Admitted, r.Visitors, r.WaitP50, r.WaitP90, r.BotTries, r.BotTickets, r.BotCalled, r.BotLimited, r.BotDecoyed, r.BotCPU, r.Refused)
	return r
}

// mostInAMinute is the most of joins, by key, in any window of a minute
// (the Edge Rate Limiting counters' window: events less than a minute
// old).
func mostInAMinute(joins []botJoin, key func(botJoin) string) map[string]int {
	by := map[string][]time.Time{}
	for _, j := range joins {
		by[key(j)] = append(by[key(j)], j.at)
	}
	most := map[string]int{}
	for k, ts := range by {
		sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
		first := 0
		for i, t := range ts {
			for t.Sub(ts[first]) >= time.Minute {
				first++
			}
			most[k] = max(most[k], i-first+1)
		}
	}
	return most
}

// TestDistributedBotsAreHeldToTheNetworkLimits plays a botnet through the
// gate and the edge's join counter, once with the limit per network below
// the AS's share of it and once with the AS's below its networks' sum: no
// /24 and no AS gets more tickets in any minute than its limit, the lower
// limit is the one that refuses joins, and the limits per network let
// fewer bots in than the limit per address alone.
func TestDistributedBotsAreHeldToTheNetworkLimits(t *testing.T) {
	perAddress := runDistributed(t, smallDistributed(Defences[0]))
	for _, c := range []struct {
		network, as int
		refuses     string
	}{{40, 1000, "joins per network"}, {1000, 100, "joins per autonomous system"}} {
		cfg := smallDistributed(Defences[1])
		cfg.PerNetwork, cfg.PerAS = c.network, c.as
		r := runDistributed(t, cfg)
		for scope, most := range map[string]map[string]int{
			"network": mostInAMinute(r.joins, func(j botJoin) string { return j.network }),
			"AS":      mostInAMinute(r.joins, func(j botJoin) string { return strconv.Itoa(j.as) }),
		} {
			limit := map[string]int{"network": cfg.PerNetwork, "AS": cfg.PerAS}[scope]
			for k, n := range most {
				if n > limit {
					t.Errorf("%s %s took %d tickets in a minute, over its limit of %d", scope, k, n, limit)
				}
			}
			if len(most) == 0 {
				t.Errorf("no bot took a ticket from any %s: the run tests nothing", scope)
			}
		}
		if r.Refused[c.refuses] == 0 {
			t.Errorf("limits of %d per network and %d per AS: no join refused by %q: %v", c.network, c.as, c.refuses, r.Refused)
		}
		if r.BotTickets >= perAddress.BotTickets {
			t.Errorf("%d bot tickets with the network limits, %d without: they held nothing back", r.BotTickets, perAddress.BotTickets)
		}
		if r.VisitorsLimited != 0 {
			t.Errorf("%d visitors' joins refused: each has a network of their own", r.VisitorsLimited)
		}
	}
}

// TestDistributedBotsPayForTheirWork holds the bots' proof of work to its
// price: each solve comes back no sooner than its hashes take at the
// bots' rate, the ladder asks its top rung of bots that join again and
// again, and bots that hash a thousand times slower get fewer tickets.
func TestDistributedBotsPayForTheirWork(t *testing.T) {
	cfg := smallDistributed(Defences[2])
	r := runDistributed(t, cfg)
	var cpu float64
	top := 0
	for _, s := range r.solves {
		if s.back.Sub(s.asked) < time.Duration(s.cpu*float64(time.Second)) {
			t.Fatalf("a solve of %.3f CPU-s asked at %v came back after %v", s.cpu, s.asked.Sub(Start), s.back.Sub(s.asked))
		}
		cpu += s.spent
		if s.bits == cfg.Defence.ProofOfWork {
			top++
		}
	}
	if len(r.solves) == 0 || cpu != r.BotCPU {
		t.Fatalf("%d solves of %.3f CPU-s, the report says %.3f", len(r.solves), cpu, r.BotCPU)
	}
	if top == 0 {
		t.Errorf("none of %d bot solves at the top rung: the ladder never rose for them", len(r.solves))
	}
	if r.BotTickets == 0 || r.BotCPUPerTicket() <= 0 {
		t.Fatalf("%d bot tickets for %.1f CPU-s: the run tests nothing", r.BotTickets, r.BotCPU)
	}
	slow := cfg
	slow.Bots.HashRate /= 1000
	s := runDistributed(t, slow)
	if s.BotTickets >= r.BotTickets {
		t.Errorf("bots hashing 1,000 times slower took %d tickets, as fast ones %d", s.BotTickets, r.BotTickets)
	}
}

// TestDistributedBotsDecoyedHoldNoPlaces flags every bot request as a bad
// bot, in a room with a decoy line, and gives the bots too little CPU to
// do the decoy's way out within the event: they are all decoyed, with no
// ticket and at most a real place's store call a request, and the
// visitors fare exactly as without them.
func TestDistributedBotsDecoyedHoldNoPlaces(t *testing.T) {
	cfg := smallDistributed(Defences[3])
	alone := cfg
	alone.Bots = Botnet{}
	base := runDistributed(t, alone)
	cfg.Bots.Flagged, cfg.Bots.HashRate = 1, 1
	r := runDistributed(t, cfg)
	if r.BotTries == 0 || r.BotDecoyed != r.BotTries {
		t.Errorf("%d bot tries, %d decoyed: every one should be", r.BotTries, r.BotDecoyed)
	}
	decoyed := 0
	for _, n := range r.Decoyed {
		decoyed += n
	}
	if r.BotTickets != 0 || r.DecoyStoreCalls > decoyed {
		t.Errorf("decoyed bots took %d tickets, with %d store calls by %d decoyed requests; want none, and at most one call each",
			r.BotTickets, r.DecoyStoreCalls, decoyed)
	}
	type fate struct {
		admitted, walkedIn int
		p50, p90           time.Duration
		cpu                float64
	}
	of := func(r DistributedReport) fate {
		return fate{r.Admitted, r.WalkedIn, r.WaitP50, r.WaitP90, r.VisitorCPU}
	}
	if g, w := of(r), of(base); g != w || base.Admitted == 0 {
		t.Errorf("the visitors fared differently beside decoyed bots:\n got %+v\nwant %+v", g, w)
	}
}

// BenchmarkBotSolve is a bot's hash rate, the rate the bots' work is
// priced at (BotHashRate): challenge.Solve natively on one goroutine,
// over fresh 20-bit challenges, reported in hashes a second.
func BenchmarkBotSolve(b *testing.B) {
	var hashes int64
	for i := 0; b.Loop(); i++ {
		_, n := challenge.For("sim", strconv.Itoa(i), "", 20).Solve()
		hashes += n
	}
	b.ReportMetric(float64(hashes)/b.Elapsed().Seconds(), "hashes/s")
}
