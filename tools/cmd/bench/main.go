// Command bench runs the waiting room's benchmark and writes its sections
// of BENCHMARKS.md (benchreport.WriteSections: each section is written by
// one make target, and a run leaves the others byte for byte): the
// simulated flash crowd under the waiting room and under models of two
// other designs, with its plot, the real wasm of each build (Go, and TinyGo
// when given) under concurrent load in the local host, and the hot paths'
// Go benchmarks, native and compiled to wasm by each compiler (run
// beforehand by make bench, whose outputs the -hotpaths flags name). Each
// other section has its own mode and target: -floods-only the bot floods
// of issue 10 with the edge before and after its armour (make
// bench-floods), -fairness-only the fairness of each calling order and of
// the scheduled events' draw (make bench-fairness), -heartbeat-only the
// heartbeat's utilisation (make bench-heartbeat), -pops-only the cost of
// waiting with a snapshot of the line per POP at -visitors, or -large
// (make bench-pops, bench-pops-large), -host-only fresh against reused
// sandboxes, and each request against its floor, from tools/suites/e2e's
// request benchmarks and the parts of a request (make bench-host),
// -shards-only the flash crowd at -visitors in a room of 1, 2, 4 and 8
// shards, per shard, against one core's -ceiling (make bench-shards),
// -work-only the work page's searches in Chromium against a bot's native
// hash rate (make bench-work), -bots-only the distributed bots of issue
// 26 against the join limits per network, the proof of work and the decoy
// line, at 1/-bot-scale (make bench-bots), -figures-only the module sizes and the Fastly CLI's version the docs
// quote (make figures), and -script-only the Redis CPU of a call of the
// store's script, this tree's against a baseline commit's, each measured
// by its own build of cmd/scriptbench (make bench-script).
//
//	go run ./cmd/bench -hotpaths hot.txt -wasm ../bin/main.go.wasm -hotpaths-wasm hot-wasm.txt \
//	    [-tinygo-wasm ../bin/main.tinygo.wasm -tinygo-hotpaths hot-tinygo.txt -tinygo-version 0.33.0] \
//	    -manifest ../fastly.toml -out ../BENCHMARKS.md -plot ../docs/flashcrowd.svg [-large]
//	go run ./cmd/bench -floods-only -out ../BENCHMARKS.md -command "make bench-floods"
//	go run ./cmd/bench -fairness-only -out ../BENCHMARKS.md -command "make bench-fairness"
//	go run ./cmd/bench -heartbeat-only -out ../BENCHMARKS.md -command "make bench-heartbeat"
//	go run ./cmd/bench -pops-only [-large] -out ../BENCHMARKS.md -command "make bench-pops"
//	go run ./cmd/bench -shards-only [-visitors 1000000] [-ceiling 13000] [-shard-pops 0,1] -out ../BENCHMARKS.md -command "make bench-shards"
//	go run ./cmd/bench -host-only -host go.txt -parts parts-go.txt [-tinygo-host tinygo.txt -tinygo-parts parts-tinygo.txt -tinygo-version 0.33.0] -host-requests 300 -out ../BENCHMARKS.md -command "make bench-host"
//	go run ./cmd/bench -work-only -work-times ../bin/bench/work-times.json -out ../BENCHMARKS.md -command "make bench-work"
//	go run ./cmd/bench -bots-only [-bot-scale 10] -out ../BENCHMARKS.md -command "make bench-bots"
//	go run ./cmd/bench -figures-only -wasm ../bin/main.go.wasm [-tinygo-wasm ../bin/main.tinygo.wasm -tinygo-version 0.33.0] -out ../BENCHMARKS.md -command "make figures"
//	go run ./cmd/bench -script-only -script-today ../bin/bench/scriptbench-today -script-baseline ../bin/bench/scriptbench-baseline [-script-waiting "1000 100000"] -script-commit abc1234 -script-baseline-commit 39117c1 -out ../BENCHMARKS.md -command "make bench-script"
package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/benchreport"
	"github.com/edgequeue/waitingroom/tools/load"
	"github.com/edgequeue/waitingroom/tools/redisproc"
	"github.com/edgequeue/waitingroom/tools/resp"
	"github.com/edgequeue/waitingroom/tools/scriptbench"
	"github.com/edgequeue/waitingroom/tools/sim"
)

// options are the command's flags.
type options struct {
	hotpaths, manifest, out, plot, command, cacheDir, cliPackage string
	// builds are Go's and, when its wasm is given, TinyGo's.
	builds                              []build
	missing                             string
	visitors, loadVisitors, concurrency int
	began                               time.Time
	// floods are the bot floods played (sim.FloodScenarios);
	// floodsOnly plays them alone.
	floods     []sim.FloodScenario
	floodsOnly bool
	// fairness are the rooms whose order is measured
	// (sim.FairnessScenarios) and draws the chi-square tests of the
	// draw (drawTests); fairnessOnly plays them alone.
	fairness     []sim.FairnessScenario
	draws        []drawTest
	fairnessOnly bool
	// heartbeatOnly plays only the heartbeat's rooms
	// (sim.HeartbeatScenarios).
	heartbeatOnly bool
	// popsOnly plays only the flash crowd's designs with and without the
	// POPs' snapshots.
	popsOnly bool
	// hostOnly writes the reusable sandboxes' section from each build's
	// request benchmarks (build.host), run hostRequests times each;
	// figuresOnly writes the module sizes and the CLI's version
	// (cliPackage).
	hostOnly, figuresOnly bool
	hostRequests          int
	hostCount             int
	// scriptOnly measures the store's script with two builds of
	// cmd/scriptbench, this tree's (scriptToday, at scriptCommit) and the
	// baseline's (scriptBaseline, at scriptBaselineCommit), on lines of
	// scriptWaiting (space-separated), and writes the script's section.
	// scriptArgs are more flags for both (space-separated); scriptJSON,
	// when set, is where both runs' measurements are written.
	scriptOnly                                                                                                                bool
	scriptToday, scriptBaseline, scriptCommit, scriptBaselineCommit, scriptWaiting, scriptArgs, scriptJSON, scriptBaselineDir string
	// shardsOnly plays the flash crowd in rooms of each of shardCounts
	// shards, under today's edge and the snapshot over each of
	// shardPOPs POPs (0: today's edge), against one core's ceiling
	// (0: the script's section's).
	shardsOnly bool
	shardPOPs  []int
	ceiling    float64
	// shardsKeep is where the runs are kept, shardsFrom the kept runs
	// to write the section from instead of playing them.
	shardsKeep, shardsFrom string
	// workOnly writes the proof of work's section from workTimes, the
	// work page's searches in Chromium (TestWorkSearchTimes), and a bot's
	// hash rate it measures.
	workOnly  bool
	workTimes string
	// botsOnly plays the distributed bots against each defence at
	// 1/botScale and writes their section.
	botsOnly bool
	botScale int
}

// shardCounts are the shards a room runs as in make bench-shards.
var shardCounts = []int{1, 2, 4, 8}

// largeCrowd is the crowd make bench-shards puts on paper at the most
// shards.
const largeCrowd = 10000000

// drawTest is a chi-square test of the draw: package draw's order over
// draws keys, or the store's script over draws real draws.
type drawTest struct {
	tickets, draws int
	store          bool
}

// drawTests are the draws tested: package draw's order for a small and a
// larger pre-queue over many keys, and the script itself over fewer real
// draws, each a few dozen calls.
var drawTests = []drawTest{{tickets: 10, draws: 100000}, {tickets: 100, draws: 100000}, {tickets: 10, draws: 1000, store: true}}

// build names one compiler's wasm, its hot paths' benchmark output, its
// request benchmarks' output in the local host and the output of the
// parts of a request (make bench-host's hot paths).
type build struct{ name, version, wasm, hotpaths, host, parts string }

func main() {
	var o options
	flag.StringVar(&o.hotpaths, "hotpaths", "", "`file` holding go test -bench -benchmem output of the hot paths")
	goBuild, tinygo := build{name: "Go", version: runtime.Version()}, build{name: "TinyGo"}
	flag.StringVar(&goBuild.wasm, "wasm", "bin/main.go.wasm", "the service built by Go")
	flag.StringVar(&goBuild.hotpaths, "hotpaths-wasm", "", "`file` holding the hot paths' benchmarks compiled to wasm by Go")
	flag.StringVar(&tinygo.wasm, "tinygo-wasm", "", "the service built by TinyGo (empty: not measured)")
	flag.StringVar(&tinygo.hotpaths, "tinygo-hotpaths", "", "`file` holding the hot paths' benchmarks under tinygo test")
	flag.StringVar(&tinygo.version, "tinygo-version", "", "TinyGo's version, for the report")
	flag.StringVar(&o.missing, "missing", "", "why a build is not measured, for the report")
	flag.StringVar(&o.manifest, "manifest", "fastly.toml", "the manifest whose [local_server] the host reads")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", "where to write the report")
	flag.StringVar(&o.plot, "plot", "docs/flashcrowd.svg", "where to write the plot")
	flag.IntVar(&o.visitors, "visitors", 100000, "visitors in the simulated event")
	large := flag.Bool("large", false, "simulate 1,000,000 visitors (overrides -visitors)")
	flag.IntVar(&o.loadVisitors, "load-visitors", 10000, "visitors sent through the real wasm")
	flag.IntVar(&o.concurrency, "concurrency", 32, "requests in flight at once through the real wasm")
	started := flag.Int64("started", 0, "Unix time the whole run started (for the report), if before this command")
	flag.StringVar(&o.command, "command", "make bench", "the command named in the report")
	flag.BoolVar(&o.floodsOnly, "floods-only", false, "play only the bot floods and rewrite their section of -out")
	flag.BoolVar(&o.fairnessOnly, "fairness-only", false, "measure only the fairness and rewrite its section of -out")
	flag.BoolVar(&o.heartbeatOnly, "heartbeat-only", false, "play only the heartbeat's rooms and rewrite its section of -out")
	flag.BoolVar(&o.popsOnly, "pops-only", false, "play only the POPs' snapshot (and today's edge and the models) and rewrite its section of -out")
	flag.BoolVar(&o.hostOnly, "host-only", false, "write only the reusable sandboxes' and the floor's sections of -out from -host, -tinygo-host, -parts and -tinygo-parts")
	flag.StringVar(&goBuild.host, "host", "", "`file` holding tools/suites/e2e's request benchmarks against the Go build")
	flag.StringVar(&tinygo.host, "tinygo-host", "", "`file` holding them against the TinyGo build")
	flag.StringVar(&goBuild.parts, "parts", "", "`file` holding the parts of a request's benchmarks compiled to wasm by Go, for the floor's section")
	flag.StringVar(&tinygo.parts, "tinygo-parts", "", "`file` holding them under tinygo test")
	flag.IntVar(&o.hostRequests, "host-requests", 0, "the requests of each request benchmark (-benchtime), for the report")
	flag.IntVar(&o.hostCount, "host-count", 1, "the runs of each request benchmark (-count), for the report")
	flag.BoolVar(&o.figuresOnly, "figures-only", false, "write only the figures' section of -out: the size of -wasm and -tinygo-wasm and the CLI's version")
	flag.BoolVar(&o.shardsOnly, "shards-only", false, "play only the flash crowd in rooms of 1, 2, 4 and 8 shards and rewrite its section of -out")
	flag.Float64Var(&o.ceiling, "ceiling", 0, "one Redis core's calls a second for a room (0: the script's section of -out, else issue 25's 13,000)")
	flag.StringVar(&o.shardsKeep, "shards-keep", "", "`file` to keep -shards-only's runs in (JSON)")
	flag.StringVar(&o.shardsFrom, "shards-from", "", "`files` (comma-separated) of runs kept by -shards-keep: write the section from them instead of playing them")
	shardPOPs := flag.String("shard-pops", "0", "comma-separated POPs of the designs -shards-only plays (0: today's edge, without snapshots)")
	flag.StringVar(&o.cliPackage, "cli-package", "fastlycli/package.json", "the package.json that installs the Fastly CLI")
	flag.BoolVar(&o.scriptOnly, "script-only", false, "measure only the store's script with -script-today and -script-baseline, and rewrite its section of -out")
	flag.StringVar(&o.scriptToday, "script-today", "", "cmd/scriptbench built against this tree")
	flag.StringVar(&o.scriptBaseline, "script-baseline", "", "cmd/scriptbench built against the baseline")
	flag.StringVar(&o.scriptWaiting, "script-waiting", "1000 100000 1000000", "the line lengths the script is measured on, space-separated")
	flag.StringVar(&o.scriptArgs, "script-args", "", "more flags for both builds of cmd/scriptbench, space-separated")
	flag.StringVar(&o.scriptJSON, "script-json", "", "where to write both runs' measurements (JSON), round by round")
	flag.StringVar(&o.scriptCommit, "script-commit", "", "this tree's commit, for the report")
	flag.StringVar(&o.scriptBaselineCommit, "script-baseline-commit", "", "the baseline's commit, for the report")
	flag.StringVar(&o.scriptBaselineDir, "script-baseline-dir", "", "the baseline's tree, whose store/line.lua the report compares with this tree's")
	flag.BoolVar(&o.workOnly, "work-only", false, "write only the proof of work's section of -out, from -work-times and a bot's hash rate measured here")
	flag.StringVar(&o.workTimes, "work-times", "", "`file` of the work page's searches in Chromium (tools/suites/pagetest's TestWorkSearchTimes, JSON)")
	flag.BoolVar(&o.botsOnly, "bots-only", false, "play only the distributed bots against each defence and rewrite their section of -out")
	flag.IntVar(&o.botScale, "bot-scale", 10, "play the distributed bots' event at 1/`n` (the crowd, the rate and the botnet's AS; 1: full scale)")
	flag.StringVar(&o.cacheDir, "cache", filepath.Join(os.TempDir(), "fastlyhost-bench-cache"), "compiled-code cache of the host")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	if *large {
		o.visitors = 1000000
	}
	for _, f := range strings.Split(*shardPOPs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			log.Fatalf("-shard-pops %q: want POP counts, 0 or more, separated by commas", *shardPOPs)
		}
		o.shardPOPs = append(o.shardPOPs, n)
	}
	o.floods, o.fairness, o.draws = sim.FloodScenarios, sim.FairnessScenarios, drawTests
	o.builds = []build{goBuild}
	if tinygo.wasm != "" || tinygo.host != "" {
		o.builds = append(o.builds, tinygo)
	}
	o.began = time.Now()
	if *started > 0 {
		o.began = time.Unix(*started, 0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	do := run
	switch {
	case countTrue(o.floodsOnly, o.fairnessOnly, o.heartbeatOnly, o.popsOnly, o.hostOnly, o.figuresOnly, o.scriptOnly, o.shardsOnly, o.workOnly, o.botsOnly) > 1:
		log.Fatal("-floods-only, -fairness-only, -heartbeat-only, -pops-only, -host-only, -figures-only, -script-only, -shards-only, -work-only and -bots-only: one section at a time")
	case o.floodsOnly:
		do = runFloods
	case o.fairnessOnly:
		do = runFairness
	case o.heartbeatOnly:
		do = runHeartbeat
	case o.popsOnly:
		do = runPOPs
	case o.hostOnly:
		do = runHost
	case o.figuresOnly:
		do = runFigures
	case o.scriptOnly:
		do = runScript
	case o.shardsOnly:
		do = runShards
	case o.workOnly:
		do = runWork
	case o.botsOnly:
		do = runBots
	}
	if err := do(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	res := benchreport.Results{Date: time.Now(), Command: o.command, Machine: benchreport.DescribeMachine(), Missing: o.missing}
	var err error
	if res.HotPaths, err = hotPaths(o.hotpaths); err != nil {
		return err
	}
	for _, b := range o.builds {
		rb := benchreport.Build{Name: b.name, Toolchain: b.version}
		if b.hotpaths != "" {
			if rb.HotPaths, err = hotPaths(b.hotpaths); err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
		}
		res.Builds = append(res.Builds, rb)
	}

	res.Workload = flashCrowd(o.visitors)
	if res.Reports, err = simulate(ctx, res.Workload); err != nil {
		return err
	}

	for i := range res.Builds {
		b, wasm := &res.Builds[i], o.builds[i].wasm
		log.Printf("load: %d visitors through %s, %d at a time", o.loadVisitors, wasm, o.concurrency)
		if b.Load, err = load.Run(ctx, load.Options{Wasm: wasm, Manifest: o.manifest, CacheDir: o.cacheDir,
			Visitors: o.loadVisitors, Concurrency: o.concurrency}); err != nil {
			return fmt.Errorf("load %s: %w", wasm, err)
		}
		for _, p := range b.Load.Phases {
			log.Printf("load %s: %-10s %6d requests, %6.1f/s, p50 %v, p99 %v, CPU %v a request", b.Name, p.Kind, p.Requests, p.PerSecond(),
				p.P50.Round(time.Millisecond), p.P99.Round(time.Millisecond), p.CPUPerRequest().Round(100*time.Microsecond))
		}
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
	old, err := os.ReadFile(o.out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc, err := benchreport.WriteSections(string(old), "bench", benchreport.BenchSections(res)...)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(doc), 0o644); err != nil {
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

// flashCrowd is the event: a fifth of the visitors (20,000 of 100,000) in
// the first minute, the rest over 40 minutes, and places for 7.5% of them
// at once.
func flashCrowd(visitors int) sim.Config {
	return sim.Crowd(visitors, visitors/5, visitors*3/40, 40*time.Minute)
}

// runFloods plays the bot floods and rewrites their section of o.out.
func runFloods(ctx context.Context, o options) error {
	return rewrite(o, "floods", "bench-floods", benchreport.Floods, func(res *benchreport.Results) (err error) {
		res.Floods, err = floods(ctx, o.floods)
		res.FloodsTook = time.Since(o.began)
		return err
	})
}

// runFairness measures the fairness and rewrites its section of o.out.
func runFairness(ctx context.Context, o options) error {
	return rewrite(o, "fairness", "bench-fairness", benchreport.Fairness, func(res *benchreport.Results) error {
		err := fairness(ctx, o, res)
		res.FairnessTook = time.Since(o.began)
		return err
	})
}

// runHeartbeat plays the heartbeat's rooms and rewrites its section of
// o.out.
func runHeartbeat(ctx context.Context, o options) error {
	return rewrite(o, "heartbeat", "bench-heartbeat", benchreport.HeartbeatSection, func(res *benchreport.Results) error {
		err := heartbeats(ctx, res)
		res.HeartbeatTook = time.Since(o.began)
		return err
	})
}

// runPOPs plays the flash crowd at o.visitors under today's edge, the
// snapshot over each number of POPs and the models, and rewrites that
// size's section of o.out.
func runPOPs(ctx context.Context, o options) error {
	name := benchreport.POPSectionName(o.visitors)
	target, _ := benchreport.SectionOwner(name)
	return rewrite(o, name, target, func(res benchreport.Results) string { return benchreport.POPSection(res, res.POPs[0]) },
		func(res *benchreport.Results) error {
			cfg := flashCrowd(o.visitors)
			reports, err := simulate(ctx, cfg)
			if err != nil {
				return err
			}
			p, err := popRun(ctx, cfg, reports)
			res.POPs = []benchreport.POPRun{p}
			return err
		})
}

// popRun plays cfg with the snapshot over each of sim.POPCounts, each on a
// fresh redis-server, beside base: simulate's reports on cfg (today's
// edge, then the models).
func popRun(ctx context.Context, cfg sim.Config, base []sim.Report) (benchreport.POPRun, error) {
	room, err := sim.Room(`"max_active_users":` + strconv.Itoa(cfg.Capacity))
	if err != nil {
		return benchreport.POPRun{}, err
	}
	p := benchreport.POPRun{Workload: cfg, Today: base[0], Models: base[1:], TTL: room.SnapshotTTL(),
		QueueTimeout: time.Duration(room.QueueTimeout) * time.Second}
	for _, r := range base {
		p.Took += r.Elapsed
	}
	for _, n := range sim.POPCounts {
		srv, err := redisproc.Start()
		if err != nil {
			return p, err
		}
		ours, err := sim.NewOursPOPs(srv.Addr, room, n)
		if err != nil {
			srv.Close()
			return p, err
		}
		log.Printf("simulate: %s, %d visitors", ours.Name(), cfg.Visitors)
		rep, err := sim.Run(ctx, cfg, ours, resp.NewPool(srv.Addr, 2))
		srv.Close()
		if err != nil {
			return p, fmt.Errorf("simulate %s: %w", ours.Name(), err)
		}
		log.Printf("simulate: %s: %.2f store calls per visitor-minute far from the front, %.2f per admitted visitor, peak %d a second, overshoot %d, %d inversions, %d places lost, in %v",
			rep.Policy, rep.FarCallsPerMinute(), rep.CallsPerAdmitted(), rep.PeakCallsPerSecond, rep.Overshoot, rep.Inversions, rep.LostPlaces, rep.Elapsed.Round(time.Second))
		p.Snapshots = append(p.Snapshots, rep)
		p.Took += rep.Elapsed
	}
	return p, nil
}

// countTrue counts the flags set.
func countTrue(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// heartbeatVisitors is the heartbeat workload's size: the flash crowd's
// shape at a tenth of its visitors, so that its three rooms play in a few
// minutes.
const heartbeatVisitors = 10000

// heartbeats plays each room of sim.HeartbeatScenarios on the heartbeat
// workload, each on its own fresh redis-server.
func heartbeats(ctx context.Context, res *benchreport.Results) error {
	res.HeartbeatWorkload = flashCrowd(heartbeatVisitors)
	for _, s := range sim.HeartbeatScenarios {
		room, err := s.Room(`"max_active_users":` + strconv.Itoa(res.HeartbeatWorkload.Capacity))
		if err != nil {
			return err
		}
		cfg := s.Config(res.HeartbeatWorkload, room)
		srv, err := redisproc.Start()
		if err != nil {
			return err
		}
		ours, err := sim.NewOurs(srv.Addr, room)
		if err != nil {
			srv.Close()
			return err
		}
		rep, err := sim.Run(ctx, cfg, ours, resp.NewPool(srv.Addr, 2))
		srv.Close()
		if err != nil {
			return fmt.Errorf("heartbeat %q: %w", s.Name, err)
		}
		log.Printf("heartbeat: %s: utilisation %.1f%%, %.1f%% held by the gone, %.2f keep-alive calls per visitor-minute, in %v", s.Name,
			rep.Utilisation*100, rep.IdleHeld*100, rep.KeepCallsPerMinute(), rep.Elapsed.Round(time.Second))
		res.Heartbeats = append(res.Heartbeats, benchreport.Heartbeat{Scenario: s, Report: rep, Every: cfg.Heartbeat})
	}
	return nil
}

// rewrite measures the named section, which target owns, and puts it, as
// section renders it, in place of its old version in o.out, leaving the
// other sections as they are.
func rewrite(o options, name, target string, section func(benchreport.Results) string, measure func(*benchreport.Results) error) error {
	if _, err := os.Stat(o.out); err != nil {
		return fmt.Errorf("the report whose section %s to rewrite: %w", name, err)
	}
	res := benchreport.Results{Date: time.Now(), Command: o.command}
	if err := measure(&res); err != nil {
		return err
	}
	// Read the report only now: another target may have rewritten a
	// section of its own while this one measured (for minutes).
	doc, err := os.ReadFile(o.out)
	if err != nil {
		return fmt.Errorf("the report whose section %s to rewrite: %w", name, err)
	}
	out, err := benchreport.WriteSections(string(doc), target, benchreport.Section{Name: name, Text: section(res)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(out), 0o644); err != nil {
		return err
	}
	log.Printf("rewrote section %s of %s in %v", name, o.out, time.Since(o.began).Round(time.Second))
	return nil
}

// runHost reads the local host's request benchmarks of each build and the
// parts of a request (run beforehand by make bench-host) and rewrites the
// reusable sandboxes' and the floor's sections of o.out.
func runHost(_ context.Context, o options) error {
	var hosts []benchreport.HostBench
	err := rewrite(o, "reuse", "bench-host", func(res benchreport.Results) string {
		return benchreport.ReuseSection(res, hosts, o.hostRequests, o.hostCount, time.Since(o.began), o.missing)
	}, func(*benchreport.Results) error {
		for _, b := range o.builds {
			if b.host == "" {
				continue
			}
			f, err := os.Open(b.host)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			m, err := benchreport.ParseHostBench(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %s: %w", b.name, b.host, err)
			}
			hb := benchreport.HostBench{Build: b.name, Toolchain: b.version, Results: m}
			if b.parts != "" {
				f, err := os.Open(b.parts)
				if err != nil {
					return fmt.Errorf("%s: %w", b.name, err)
				}
				hb.Parts, err = benchreport.ParseGoBench(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %s: %w", b.name, b.parts, err)
				}
			}
			hosts = append(hosts, hb)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rewrite(o, "floor", "bench-host", func(res benchreport.Results) string {
		return benchreport.FloorSection(res, hosts, o.hostRequests, o.hostCount, time.Since(o.began), o.missing)
	}, func(*benchreport.Results) error { return nil })
}

// runFigures measures each build's module and reads the Fastly CLI's
// version, and rewrites the figures' section of o.out.
func runFigures(_ context.Context, o options) error {
	var modules []benchreport.Module
	var cli string
	return rewrite(o, "figures", "figures", func(res benchreport.Results) string {
		return benchreport.FiguresSection(res, modules, cli)
	}, func(*benchreport.Results) (err error) {
		for _, b := range o.builds {
			fi, err := os.Stat(b.wasm)
			if err != nil {
				return err
			}
			modules = append(modules, benchreport.Module{Build: b.name, Toolchain: b.version, Path: "bin/" + filepath.Base(b.wasm), Bytes: fi.Size()})
		}
		cli, err = benchreport.FastlyCLIVersion(o.cliPackage)
		return err
	})
}

// runScript has two harnesses measure the store's script, this tree's and
// the baseline's (built beforehand by make bench-script), and rewrites the
// script's section of o.out. For each line length both fill their lines at
// once, then their passes run together, taking turns round by round (a
// few hundred calls), so that the machine's other work weighs on both
// alike.
func runScript(ctx context.Context, o options) error {
	runs := []*benchreport.ScriptRun{{Name: "this tree", Commit: o.scriptCommit, Script: scriptSHA("../store/line.lua")},
		{Name: "baseline", Commit: o.scriptBaselineCommit, Script: scriptSHA(filepath.Join(o.scriptBaselineDir, "store", "line.lua"))}}
	var pinnedCPU string
	return rewrite(o, "script", "bench-script", func(res benchreport.Results) string {
		return benchreport.ScriptSection(res, *runs[0], *runs[1], pinnedCPU, time.Since(o.began), scriptCommands(o, runs[0].Result.Config))
	}, func(res *benchreport.Results) error {
		res.Machine = benchreport.DescribeMachine()
		waiting := strings.Join(strings.Fields(o.scriptWaiting), ",")
		var procs []*scriptbench.Proc
		defer func() {
			for _, p := range procs {
				p.Close()
			}
		}()
		for i, bin := range []string{o.scriptToday, o.scriptBaseline} {
			args := append([]string{"-label", []string{"today", "baseline"}[i], "-waiting", waiting}, strings.Fields(o.scriptArgs)...)
			p, err := scriptbench.StartProc(bin, args...)
			if err != nil {
				return err
			}
			procs = append(procs, p)
			runs[i].Result = scriptbench.Result{Redis: p.Redis, Config: p.Config}
		}
		// Both redis-servers on one CPU: a core that is slower for a
		// while (its sibling busy with other work) then slows both alike.
		cpu := strconv.Itoa(runtime.NumCPU() - 1)
		for _, p := range procs {
			if out, err := exec.Command("taskset", "-p", "-c", cpu, strconv.Itoa(p.RedisPID)).CombinedOutput(); err != nil {
				log.Printf("both redis-servers are not on one CPU: taskset: %v %s", err, out)
				cpu = ""
			}
		}
		pinnedCPU = cpu
		cfg := procs[0].Config
		for _, n := range cfg.Waiting {
			errs := make(chan error, len(procs))
			for i, p := range procs {
				go func() { errs <- wrap(runs[i].Name, p.Fill(n)) }()
			}
			for range procs {
				if err := <-errs; err != nil {
					return err
				}
			}
			lines := make([]scriptbench.Line, len(procs))
			for pass := range cfg.Passes {
				for i, p := range procs {
					if err := p.Begin(); err != nil {
						return wrap(runs[i].Name, err)
					}
				}
				// Round by round, who goes first taking turns too.
				done := make([]bool, len(procs))
				for k, left := 0, len(procs); left > 0; k++ {
					for j := range procs {
						i := (j + k + pass) % len(procs)
						if done[i] {
							continue
						}
						l, err := procs[i].Step()
						if err != nil {
							return wrap(runs[i].Name, err)
						}
						if l != nil {
							lines[i].Add(*l)
							done[i] = true
							left--
						}
					}
				}
			}
			for i := range runs {
				runs[i].Result.Lines = append(runs[i].Result.Lines, lines[i])
			}
		}
		if o.scriptJSON != "" {
			b, err := json.MarshalIndent(runs, "", "  ")
			if err == nil {
				err = os.WriteFile(o.scriptJSON, b, 0o644)
			}
			if err != nil {
				return err
			}
		}
		for _, r := range runs {
			if err := r.Result.Check(); err != nil {
				return wrap(r.Name, err)
			}
		}
		return nil
	})
}

// scriptSHA is the SHA-1 of the script at path, or "" if it cannot be
// read (the section then does not compare the scripts).
func scriptSHA(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Printf("the script of the report: %v", err)
		return ""
	}
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// wrap names whose err it is, if any.
func wrap(who string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", who, err)
}

// scriptCommands are the commands make bench-script ran, as the section
// names them.
func scriptCommands(o options, cfg scriptbench.Config) []string {
	dir := "bin/baseline-" + o.scriptBaselineCommit
	return []string{
		"make bench-script SCRIPT_BASELINE=" + o.scriptBaselineCommit + " SCRIPT_WAITING=\"" + strings.Join(strings.Fields(o.scriptWaiting), " ") + "\" # runs:",
		"git archive " + o.scriptBaselineCommit + " -- ':(exclude)tools' | tar -x -C " + dir,
		"cd tools && go build -o ../bin/bench/scriptbench-today ./cmd/scriptbench",
		"# bin/bench/scriptbench-baseline.mod: tools/go.mod with replace github.com/edgequeue/waitingroom => " + dir,
		"cd tools && go build -modfile ../bin/bench/scriptbench-baseline.mod -o ../bin/bench/scriptbench-baseline ./cmd/scriptbench",
		"cd tools && go run ./cmd/bench -script-only -script-today ../bin/bench/scriptbench-today -script-baseline ../bin/bench/scriptbench-baseline \\",
		"    -script-waiting \"" + strings.Join(strings.Fields(o.scriptWaiting), " ") + "\" -script-baseline-commit " + o.scriptBaselineCommit + " -script-baseline-dir ../" + dir + " -out ../BENCHMARKS.md -command \"make bench-script\"",
		fmt.Sprintf("# which runs each harness as: scriptbench -serve -waiting %s -calls %d -rounds %d -passes %d -clients %d -saturation-clients %d -saturation-calls %d -fill-clients %d",
			strings.Join(strings.Fields(o.scriptWaiting), ","), cfg.Calls, cfg.Rounds, cfg.Passes, cfg.Clients, cfg.SaturationClients, cfg.SaturationCalls, cfg.FillClients),
	}
}

// fairness measures each of o.fairness's rooms on the flash crowd, each on
// its own fresh redis-server, and o.draws.
func fairness(ctx context.Context, o options, res *benchreport.Results) error {
	res.FairnessWorkload = flashCrowd(o.visitors)
	for _, s := range o.fairness {
		f, err := fairnessRun(ctx, res.FairnessWorkload, s)
		if err != nil {
			return err
		}
		for _, p := range f.Parts {
			log.Printf("fairness: %s, %s: %d tickets called, Kendall tau distance %.4f (calling order), %.4f (%d admissions), in %v", s.Name, p.Name,
				p.Called.Items, p.Called.Distance(), p.Admitted.Distance(), p.Admitted.Items, f.Report.Elapsed.Round(time.Second))
		}
		res.Fairness = append(res.Fairness, f)
	}
	for _, d := range o.draws {
		var f sim.DrawFairness
		if d.store {
			srv, err := redisproc.Start()
			if err != nil {
				return err
			}
			f, err = sim.StoreDrawFairness(ctx, srv.Addr, d.tickets, d.draws)
			srv.Close()
			if err != nil {
				return err
			}
		} else {
			f = sim.KeyedDrawFairness(d.tickets, d.draws)
		}
		how := "package draw's order over as many keys"
		if f.Store {
			how = fmt.Sprintf("the store's, %d of them the order package draw computes", f.Agreed)
		}
		log.Printf("fairness: %d draws of %d tickets (%s): chi-square %.1f, %d degrees of freedom, 0.1%% critical value %.1f",
			f.Draws, f.Tickets, how, f.Stat, f.DOF, f.Critical)
		res.Draws = append(res.Draws, f)
	}
	return nil
}

// fairnessRun measures one room on a fresh redis-server.
func fairnessRun(ctx context.Context, cfg sim.Config, s sim.FairnessScenario) (sim.Fairness, error) {
	srv, err := redisproc.Start()
	if err != nil {
		return sim.Fairness{}, err
	}
	defer srv.Close()
	return sim.RunFairness(ctx, cfg, s, srv.Addr)
}

// floods plays each scenario beside sim.FloodCrowd with the edge before
// and after the armour, each run on its own fresh redis-server.
func floods(ctx context.Context, scenarios []sim.FloodScenario) ([]benchreport.Flood, error) {
	room, err := sim.Room(sim.FloodRoom)
	if err != nil {
		return nil, err
	}
	var out []benchreport.Flood
	for _, s := range scenarios {
		f := benchreport.Flood{Scenario: s}
		for _, e := range []struct {
			name string
			edge sim.Edge
			rep  *sim.Report
		}{{"before", sim.Before, &f.Before}, {"after", sim.After, &f.After}} {
			if *e.rep, err = flood(ctx, s.Flood(e.edge), room); err != nil {
				return nil, fmt.Errorf("bot flood %q %s: %w", s.Name, e.name, err)
			}
			r := *e.rep
			log.Printf("bot flood: %s, %s: mean wait %v, %d admitted in %v, %d places to bots, %d store calls, in %v", s.Name, e.name,
				r.WaitMean.Round(time.Second), r.AdmittedBy(sim.FloodHorizon), sim.FloodHorizon, r.BotPlaces(), r.TotalCalls(), r.Elapsed.Round(time.Second))
		}
		out = append(out, f)
	}
	return out, nil
}

// flood plays one bot flood on a fresh redis-server.
func flood(ctx context.Context, cfg sim.Config, room *queue.Room) (sim.Report, error) {
	srv, err := redisproc.Start()
	if err != nil {
		return sim.Report{}, err
	}
	defer srv.Close()
	ours, err := sim.NewOurs(srv.Addr, room)
	if err != nil {
		return sim.Report{}, err
	}
	return sim.Run(ctx, cfg, ours, resp.NewPool(srv.Addr, 2))
}

// hotPaths reads a file of benchmark output.
func hotPaths(file string) ([]benchreport.HotPath, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("hot paths: %w", err)
	}
	defer f.Close()
	return benchreport.ParseGoBench(f)
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
	ours, err := sim.NewOurs(addrs[0], room)
	if err != nil {
		return nil, err
	}
	policies := []sim.Policy{ours, twoCounter, gate}
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

// ceilingFallback is issue 25's measure of one core for one room's script
// before the cheaper call: 13,000 to 16,000 calls a second, the least.
const ceilingFallback = 13000

// runShards plays the flash crowd at o.visitors in a room of each of
// shardCounts shards, under each design of o.shardPOPs, and rewrites the
// shards' section of o.out.
func runShards(ctx context.Context, o options) error {
	doc, err := os.ReadFile(o.out)
	if err != nil {
		return fmt.Errorf("the report whose section shards to rewrite: %w", err)
	}
	ceilings := benchreport.ScriptCeilings(string(doc))
	switch {
	case o.ceiling > 0:
		ceilings = append([]benchreport.Ceiling{{Name: "the -ceiling flag's", PerSecond: o.ceiling, From: "the -ceiling flag"}}, ceilings...)
	case len(ceilings) == 0:
		ceilings = []benchreport.Ceiling{{Name: "the script before the cheaper call", PerSecond: ceilingFallback,
			From: "issue 25's measure of the script before the cheaper call (13,000 to 16,000 calls a second, the least), as this file has no script section (`make bench-script`) to take this tree's from"}}
	}
	for _, c := range ceilings {
		log.Printf("shards: one core's ceiling, %s: %.0f calls/s, from %s", c.Name, c.PerSecond, c.From)
	}
	cfg := flashCrowd(o.visitors)
	s := benchreport.ShardsRun{Workload: cfg, Room: `"max_active_users":` + strconv.Itoa(cfg.Capacity), Ceilings: ceilings, Large: largeCrowd,
		Command: "make bench-shards SHARD_VISITORS=1000000"}
	s.Measured, _ = benchreport.POPPeaks(string(doc))
	return rewrite(o, "shards", "bench-shards", func(res benchreport.Results) string { return benchreport.ShardsSection(res, s) },
		func(res *benchreport.Results) error {
			if o.shardsFrom != "" {
				// The runs of earlier make bench-shards, written again:
				// dated by the first, each one's command named, and the
				// time the longest took (they may have run side by side).
				var commands []string
				for i, file := range strings.Split(o.shardsFrom, ",") {
					b, err := os.ReadFile(file)
					if err != nil {
						return err
					}
					var kept shardsKept
					if err := json.Unmarshal(b, &kept); err != nil {
						return fmt.Errorf("%s: %w", file, err)
					}
					if i == 0 || kept.Date.Before(res.Date) {
						res.Date = kept.Date
					}
					commands = append(commands, kept.Command)
					s.Runs, s.Took = append(s.Runs, kept.Runs...), max(s.Took, kept.Took)
				}
				// Each run is held against the bound the simulator states
				// now (sim.OrderBound), from the imbalance the run measured.
				for i := range s.Runs {
					r := &s.Runs[i]
					if r.Shards <= 1 {
						continue
					}
					room, err := sim.Room(s.Room + `,"shards":` + strconv.Itoa(r.Shards))
					if err != nil {
						return err
					}
					r.Report.Shards.Bound = sim.OrderBound(room, r.Shards, r.Report.Shards.Imbalance, cfg)
				}
				res.Command = strings.Join(commands, "` and `")
				return nil
			}
			for _, pops := range o.shardPOPs {
				for _, k := range shardCounts {
					r, err := shardRun(ctx, cfg, s.Room, k, pops)
					if err != nil {
						return err
					}
					s.Runs = append(s.Runs, r)
				}
			}
			s.Took = time.Since(o.began)
			if o.shardsKeep == "" {
				return nil
			}
			b, err := json.Marshal(shardsKept{Date: res.Date, Command: res.Command, Runs: s.Runs, Took: s.Took})
			if err != nil {
				return err
			}
			return os.WriteFile(o.shardsKeep, b, 0o644)
		})
}

// shardsKept are make bench-shards' runs as -shards-keep writes them and
// -shards-from reads them.
type shardsKept struct {
	Date    time.Time
	Command string
	Runs    []benchreport.ShardRun
	Took    time.Duration
}

// shardRun plays cfg in the room of settings and k shards, over pops
// POPs, on a fresh redis-server.
func shardRun(ctx context.Context, cfg sim.Config, settings string, k, pops int) (benchreport.ShardRun, error) {
	room, err := sim.Room(settings + `,"shards":` + strconv.Itoa(k))
	if err != nil {
		return benchreport.ShardRun{}, err
	}
	srv, err := redisproc.Start()
	if err != nil {
		return benchreport.ShardRun{}, err
	}
	defer srv.Close()
	ours, err := sim.NewOursPOPs(srv.Addr, room, pops)
	if err != nil {
		return benchreport.ShardRun{}, err
	}
	log.Printf("shards: K = %d, %s, %d visitors", k, ours.Name(), cfg.Visitors)
	rep, err := sim.Run(ctx, cfg, ours, resp.NewPool(srv.Addr, 2))
	if err != nil {
		return benchreport.ShardRun{}, fmt.Errorf("K = %d, %s: %w", k, ours.Name(), err)
	}
	f := rep.Shards
	log.Printf("shards: K = %d, %s: peak %d calls/s, busiest shard %d %v; overshoot %d (origin), %d (held, at most %d); across %d pairs, lag %v (of a visitor who arrived %v in; bound %v, imbalance %d), gap %v; within %d pairs, lag %v; %d lost; utilisation %.1f%%; in %v",
		k, ours.Name(), rep.PeakCallsPerSecond, f.BusiestPeak(), f.PeakPerSecond, rep.Overshoot, rep.HeldOvershoot(), rep.MaxHeld,
		f.Across.Pairs, f.Across.Lag, f.Across.LagAt, f.Bound, f.Imbalance, f.Across.Gap, f.Within.Pairs, f.Within.Lag, rep.LostPlaces, rep.Utilisation*100, rep.Elapsed.Round(time.Second))
	return benchreport.ShardRun{Shards: k, POPs: pops, Report: rep}, nil
}
