package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/edgequeue/waitingroom/tools/benchreport"
	"github.com/edgequeue/waitingroom/tools/redisproc"
	"github.com/edgequeue/waitingroom/tools/sim"
)

// runBots plays the distributed bots (issue 26): each of sim.Defences
// against each of sim.BotLoads at 1/o.botScale, the bots hashing at the
// rate measured here, and rewrites their section of o.out.
func runBots(ctx context.Context, o options) error {
	var runs []sim.DistributedReport
	var bot benchreport.BotRate
	return rewrite(o, "bots", "bench-bots", func(res benchreport.Results) string {
		return benchreport.BotsSection(res, runs, bot, time.Since(o.began))
	}, func(*benchreport.Results) error {
		bot = botRate()
		log.Printf("bots: a bot's hash rate, natively on one core: %.0f hashes a second", bot.HashesPerSecond)
		for _, d := range sim.Defences {
			for _, load := range sim.BotLoads {
				if load.Addresses > 0 {
					load.HashRate = bot.HashesPerSecond
				}
				cfg := sim.DistributedCrowd(d, load)
				cfg.Scale = o.botScale
				r, err := distributed(ctx, cfg)
				if err != nil {
					return fmt.Errorf("bots: %s, %s: %w", d.Name, load.Name, err)
				}
				log.Printf("bots: %s, %s: wait p50 %v p90 %v, %d of %d admitted; bots %d tickets, %d called, %d refused, %d decoyed, %.3f CPU-s a ticket; in %v",
					d.Name, load.Name, r.WaitP50.Round(time.Second), r.WaitP90.Round(time.Second), r.Admitted, r.Visitors,
					r.BotTickets, r.BotCalled, r.BotLimited, r.BotDecoyed, r.BotCPUPerTicket(), r.Elapsed.Round(time.Second))
				runs = append(runs, r)
			}
		}
		return nil
	})
}

// distributed plays one run on a fresh redis-server.
func distributed(ctx context.Context, cfg sim.DistributedConfig) (sim.DistributedReport, error) {
	srv, err := redisproc.Start()
	if err != nil {
		return sim.DistributedReport{}, err
	}
	defer srv.Close()
	return sim.RunDistributed(ctx, cfg, srv.Addr)
}
