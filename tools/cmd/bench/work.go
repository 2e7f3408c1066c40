package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"runtime"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/tools/benchreport"
)

// runWork writes the proof of work's section of o.out from the work
// page's searches (o.workTimes) and a bot's hash rate, measured here.
func runWork(_ context.Context, o options) error {
	b, err := os.ReadFile(o.workTimes)
	if err != nil {
		return fmt.Errorf("the work page's searches (-work-times): %w", err)
	}
	var w benchreport.WorkTimes
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("%s: %w", o.workTimes, err)
	}
	var bot benchreport.BotRate
	return rewrite(o, "work", "bench-work", func(res benchreport.Results) string {
		return benchreport.WorkSection(res, w, bot, time.Since(o.began))
	}, func(*benchreport.Results) error {
		bot = botRate()
		log.Printf("work: a bot's hash rate, natively on one core: %.0f hashes a second", bot.HashesPerSecond)
		return nil
	})
}

// botRate times challenge.Solve on one goroutine over fresh 20-bit
// challenges until it has hashed for ten seconds: what a bot's one core
// does with the edge's own solver (a bot's own may be faster).
func botRate() benchreport.BotRate {
	var hashes int64
	began := time.Now()
	for time.Since(began) < 10*time.Second {
		var seed [16]byte
		rand.Read(seed[:])
		_, n := challenge.Challenge{Seed: hex.EncodeToString(seed[:]), Bits: 20}.Solve()
		hashes += n
	}
	return benchreport.BotRate{HashesPerSecond: float64(hashes) / time.Since(began).Seconds(), Toolchain: runtime.Version()}
}
