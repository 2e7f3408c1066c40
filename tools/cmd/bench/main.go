// Command bench runs the waiting room's benchmark and writes BENCHMARKS.md
// and its plot: the simulated flash crowd under the waiting room and under
// models of two other designs, the real wasm under concurrent load in the
// local host, and the hot paths' Go benchmarks (run beforehand by make
// bench, whose output -hotpaths names).
//
//	go run ./cmd/bench -hotpaths hot.txt -wasm ../bin/main.wasm -manifest ../fastly.toml \
//	    -out ../BENCHMARKS.md -plot ../docs/flashcrowd.svg [-large]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/tools/benchreport"
	"github.com/edgequeue/waitingroom/tools/load"
	"github.com/edgequeue/waitingroom/tools/redisproc"
	"github.com/edgequeue/waitingroom/tools/resp"
	"github.com/edgequeue/waitingroom/tools/sim"
)

// options are the command's flags.
type options struct {
	hotpaths, wasm, manifest, out, plot, command, cacheDir string
	visitors, loadVisitors, concurrency                    int
	began                                                  time.Time
}

func main() {
	var o options
	flag.StringVar(&o.hotpaths, "hotpaths", "", "`file` holding go test -bench -benchmem output of the hot paths")
	flag.StringVar(&o.wasm, "wasm", "bin/main.wasm", "the service to load")
	flag.StringVar(&o.manifest, "manifest", "fastly.toml", "the manifest whose [local_server] the host reads")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", "where to write the report")
	flag.StringVar(&o.plot, "plot", "docs/flashcrowd.svg", "where to write the plot")
	flag.IntVar(&o.visitors, "visitors", 100000, "visitors in the simulated event")
	large := flag.Bool("large", false, "simulate 1,000,000 visitors (overrides -visitors)")
	flag.IntVar(&o.loadVisitors, "load-visitors", 10000, "visitors sent through the real wasm")
	flag.IntVar(&o.concurrency, "concurrency", 32, "requests in flight at once through the real wasm")
	started := flag.Int64("started", 0, "Unix time the whole run started (for the report), if before this command")
	flag.StringVar(&o.command, "command", "make bench", "the command named in the report")
	flag.StringVar(&o.cacheDir, "cache", filepath.Join(os.TempDir(), "fastlyhost-bench-cache"), "compiled-code cache of the host")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	if *large {
		o.visitors = 1000000
	}
	o.began = time.Now()
	if *started > 0 {
		o.began = time.Unix(*started, 0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	res := benchreport.Results{Date: time.Now(), Command: o.command, Machine: benchreport.DescribeMachine()}
	f, err := os.Open(o.hotpaths)
	if err != nil {
		return fmt.Errorf("hot paths: %w", err)
	}
	res.HotPaths, err = benchreport.ParseGoBench(f)
	f.Close()
	if err != nil {
		return err
	}

	// The event: a flash crowd of a fifth of the visitors (20,000 of
	// 100,000) in the first minute, the rest over 40 minutes, and places
	// for 7.5% of them at once.
	res.Workload = sim.Crowd(o.visitors, o.visitors/5, o.visitors*3/40, 40*time.Minute)
	if res.Reports, err = simulate(ctx, res.Workload); err != nil {
		return err
	}

	log.Printf("load: %d visitors through %s, %d at a time", o.loadVisitors, o.wasm, o.concurrency)
	if res.Load, err = load.Run(ctx, load.Options{Wasm: o.wasm, Manifest: o.manifest, CacheDir: o.cacheDir,
		Visitors: o.loadVisitors, Concurrency: o.concurrency}); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	for _, p := range res.Load.Phases {
		log.Printf("load: %-10s %6d requests, %6.1f/s, p50 %v, p99 %v, CPU %v a request", p.Kind, p.Requests, p.PerSecond(),
			p.P50.Round(time.Millisecond), p.P99.Round(time.Millisecond), p.CPUPerRequest().Round(100*time.Microsecond))
	}

	rel, err := filepath.Rel(filepath.Dir(o.out), o.plot)
	if err != nil {
		rel = o.plot
	}
	res.Plot = filepath.ToSlash(rel)
	res.Took = time.Since(o.began)
	if err := os.MkdirAll(filepath.Dir(o.plot), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.plot, []byte(benchreport.FlashCrowdPlot(res.Workload, res.Reports)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(benchreport.Markdown(res)), 0o644); err != nil {
		return err
	}
	ours := res.Reports[0]
	for _, other := range res.Reports[1:] {
		for _, m := range []string{"store calls, total", "store calls per admitted visitor", "capacity overshoot",
			"FIFO inversions", "utilisation while visitors wait", "time waited, p50", "time waited, p99", "Redis memory, peak"} {
			log.Printf("ours ÷ %s: %s %s", other.Policy, m, benchreport.Ratio(m, ours, other))
		}
	}
	log.Printf("wrote %s and %s in %v", o.out, o.plot, res.Took.Round(time.Second))
	return nil
}

// simulate plays the event under each design, each on its own redis-server.
func simulate(ctx context.Context, cfg sim.Config) ([]sim.Report, error) {
	var addrs [3]string
	for i := range addrs {
		srv, err := redisproc.Start()
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		addrs[i] = srv.Addr
	}
	room, err := sim.Room(`"max_active_users":` + strconv.Itoa(cfg.Capacity))
	if err != nil {
		return nil, err
	}
	twoCounter, gate := sim.Models(addrs[1], addrs[2], cfg)
	policies := []sim.Policy{sim.NewOurs(addrs[0], room), twoCounter, gate}
	var reports []sim.Report
	for i, p := range policies {
		log.Printf("simulate: %s, %d visitors", p.Name(), cfg.Visitors)
		rep, err := sim.Run(ctx, cfg, p, resp.NewPool(addrs[i], 2))
		if err != nil {
			return nil, fmt.Errorf("simulate %s: %w", p.Name(), err)
		}
		log.Printf("simulate: %s: %d admitted, %d store calls, overshoot %d, %d inversions, in %v",
			p.Name(), rep.Admitted, rep.TotalCalls(), rep.Overshoot, rep.Inversions, rep.Elapsed.Round(time.Second))
		reports = append(reports, rep)
	}
	return reports, nil
}
