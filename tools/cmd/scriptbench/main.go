// Command scriptbench measures the Redis CPU of each call of the store's
// script (package scriptbench). Alone, it measures each line length of
// -waiting and writes the result as JSON to -out. With -serve it answers
// requests on its standard input (scriptbench.Serve): that is how make
// bench-script's cmd/bench -script-only drives two of it, one built
// against this tree's store and one against the baseline commit's, taking
// turns. It imports only what builds against an older root module (see
// package scriptbench).
//
//	go run ./cmd/scriptbench [-waiting 1000,100000,1000000] [-calls 2000] -out result.json
//	scriptbench -serve [-label today]
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
	flag.IntVar(&cfg.Calls, "calls", cfg.Calls, "calls each operation is measured over in a pass")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds a pass's calls are counted in, each on its own (the median round is reported)")
	flag.IntVar(&cfg.Passes, "passes", cfg.Passes, "passes over each line")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "clients calling at once while an operation is measured")
	flag.IntVar(&cfg.SaturationClients, "saturation-clients", cfg.SaturationClients, "clients polling at once in the saturation run")
	flag.IntVar(&cfg.SaturationCalls, "saturation-calls", cfg.SaturationCalls, "calls of a pass's saturation run")
	flag.IntVar(&cfg.FillClients, "fill-clients", cfg.FillClients, "clients joining at once while the line fills")
	out := flag.String("out", "", "where to write the result (JSON)")
	serve := flag.Bool("serve", false, "answer requests on standard input (scriptbench.Serve) instead")
	label := flag.String("label", "", "what is measured, for the log")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("scriptbench" + strings.TrimSuffix(" "+*label, " ") + ": ")
	var err error
	if cfg.Waiting, err = parseInts(*waiting); err != nil {
		log.Fatalf("-waiting: %v", err)
	}
	cfg.Log = log.Printf
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *serve {
		if err := scriptbench.Serve(ctx, cfg, os.Stdin, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *out == "" {
		log.Fatal("-out (or -serve) is required")
	}
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
