// Command scriptbench measures the Redis CPU of each call of the store's
// script (package scriptbench) and writes the result as JSON. make
// bench-script runs it twice, built against this tree's store and against
// the baseline commit's, and hands both files to cmd/bench -script-only,
// which writes the section of BENCHMARKS.md. It imports only what builds
// against an older root module (see package scriptbench).
//
//	go run ./cmd/scriptbench [-waiting 1000,100000,1000000] [-calls 2000] -out today.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/tools/scriptbench"
)

func main() {
	cfg := scriptbench.Default
	waiting := flag.String("waiting", joinInts(cfg.Waiting), "the line lengths measured, comma-separated")
	flag.IntVar(&cfg.Calls, "calls", cfg.Calls, "calls each operation is measured over")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds the calls are counted in, each on its own (the median round is reported)")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "clients calling at once while an operation is measured")
	flag.IntVar(&cfg.SaturationClients, "saturation-clients", cfg.SaturationClients, "clients polling at once in the saturation run")
	flag.IntVar(&cfg.SaturationCalls, "saturation-calls", cfg.SaturationCalls, "calls of the saturation run")
	flag.IntVar(&cfg.FillClients, "fill-clients", cfg.FillClients, "clients joining at once while the line fills")
	out := flag.String("out", "", "where to write the result (JSON)")
	label := flag.String("label", "", "what is measured, for the log")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("scriptbench" + strings.TrimSuffix(" "+*label, " ") + ": ")
	if *out == "" {
		log.Fatal("-out is required")
	}
	var err error
	if cfg.Waiting, err = parseInts(*waiting); err != nil {
		log.Fatalf("-waiting: %v", err)
	}
	cfg.Log = log.Printf
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := scriptbench.Run(ctx, cfg)
	if err == nil {
		err = res.Check()
	}
	if err != nil {
		log.Fatal(err)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		err = os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}
