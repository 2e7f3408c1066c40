// Package benchreport turns one run of the benchmark into BENCHMARKS.md and
// its plot: the machine it ran on, the hot paths' Go benchmarks (native,
// and compiled to wasm by Go and by TinyGo), the simulated flash crowd under
// the waiting room and under the models of the other designs (each metric
// as a ratio, ours to theirs), the bot floods, the fairness of each calling
// order and of the draw, and the load through the real wasm of each build.
package benchreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/load"
	"github.com/edgequeue/waitingroom/tools/sim"
)

// Machine says where the numbers were measured.
type Machine struct {
	CPU, OS, Go, Redis string
	Cores              int
	MemoryGiB          float64
}

// DescribeMachine reads this machine's description.
func DescribeMachine() Machine {
	m := Machine{CPU: "unknown", OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), Cores: runtime.NumCPU(), Redis: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				m.CPU = strings.TrimSpace(value)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.OS += ", Linux " + strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if v, ok := strings.CutPrefix(f, "v="); ok {
				m.Redis = v
			}
		}
	}
	return m
}

// HotPath is one Go benchmark's result.
type HotPath struct {
	Package, Name      string
	NsPerOp            float64
	BytesPerOp, Allocs int64
}

// ParseGoBench reads `go test -bench -benchmem` output, or `tinygo test`'s,
// which names each package only after its results, on the "ok" line.
func ParseGoBench(r io.Reader) ([]HotPath, error) {
	var out []HotPath
	pkg, named := "", 0 // rows before named have their package
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "pkg:" {
			pkg = f[1][strings.LastIndex(f[1], "/")+1:]
		}
		if len(f) >= 2 && f[0] == "ok" {
			for ; named < len(out); named++ {
				if out[named].Package == "" {
					out[named].Package = f[1][strings.LastIndex(f[1], "/")+1:]
				}
			}
			pkg = ""
		}
		if len(f) < 8 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" || f[5] != "B/op" || f[7] != "allocs/op" {
			continue
		}
		h := HotPath{Package: pkg, Name: benchName(f[0])}
		var err error
		if h.NsPerOp, err = strconv.ParseFloat(f[2], 64); err != nil {
			return nil, fmt.Errorf("%q: %w", sc.Text(), err)
		}
		h.BytesPerOp, _ = strconv.ParseInt(f[4], 10, 64)
		h.Allocs, _ = strconv.ParseInt(f[6], 10, 64)
		out = append(out, h)
		if pkg != "" {
			named = len(out)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no benchmark results (with -benchmem) in the hot paths' output")
	}
	return out, sc.Err()
}

// benchName is a benchmark's name from its result line's first field:
// without "Benchmark" and the GOMAXPROCS suffix, which wasm runs lack.
func benchName(field string) string {
	name := strings.TrimPrefix(field, "Benchmark")
	if i := strings.LastIndex(name, "-"); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// Build is one compiler's wasm of the service, measured.
type Build struct {
	// Name is the compiler ("Go", "TinyGo"), Toolchain its version.
	Name, Toolchain string
	// Load is the service's wasm under load in the local host.
	Load load.Report
	// HotPaths are the hot-path benchmarks compiled to wasm by this
	// compiler and run under wazero.
	HotPaths []HotPath
}

// Results is everything one run measured.
type Results struct {
	Date    time.Time
	Command string
	// Took is the whole run's wall time, when known.
	Took    time.Duration
	Machine Machine
	// HotPaths are the hot paths' native Go benchmarks.
	HotPaths []HotPath
	Workload sim.Config
	// Reports are the simulated policies, the waiting room's own first.
	Reports []sim.Report
	// Builds are the wasm builds measured, Go's first.
	Builds []Build
	// Missing says why a build users ship was not measured ("" if none).
	Missing string
	// Plot is the plot's path relative to BENCHMARKS.md.
	Plot string
	// Floods are the bot floods, FloodsTook the time they took to play.
	Floods     []Flood
	FloodsTook time.Duration
	// Fairness are the rooms whose order of service was measured, on
	// FairnessWorkload; Draws the chi-square tests of the draw;
	// FairnessTook the time they took.
	Fairness         []sim.Fairness
	FairnessWorkload sim.Config
	Draws            []sim.DrawFairness
	FairnessTook     time.Duration
	// Heartbeats are the rooms of sim.HeartbeatScenarios played on
	// HeartbeatWorkload; HeartbeatTook the time they took.
	Heartbeats        []Heartbeat
	HeartbeatWorkload sim.Config
	HeartbeatTook     time.Duration
	// POPs are the flash crowd's costs with the snapshot of the line per
	// POP, one run per workload size.
	POPs []POPRun
}

// BenchSections are the sections make bench writes: the summary (when and
// where), the flash crowd, the end-to-end load and the hot paths. The other
// sections are written by their own targets (WriteSections).
func BenchSections(res Results) []Section {
	return []Section{{"summary", summary(res)}, {"flash-crowd", flashCrowd(res)},
		{"end-to-end", endToEnd(res)}, {"hot-paths", hotPaths(res)}}
}

// summary opens the file: the run of make bench and its machine.
func summary(res Results) string {
	m := res.Machine
	took := ""
	if res.Took > 0 {
		took = fmt.Sprintf(" (its sections took %s)", res.Took.Round(time.Second))
	}
	return fmt.Sprintf("# Benchmarks\n\nEach section is written by one make target, named in its first line (`make bench` runs them all but `bench-pops-large`, `bench-shards` and `bench-host`); "+
		"the sections without one were written by `%s` on %s%s. Run a target again to check its numbers.\n\n"+
		"Machine: %s; redis-server %s.\n",
		res.Command, res.Date.UTC().Format("2006-01-02 15:04 MST"), took, m.text(), m.Redis)
}

// flashCrowd is the flash crowd's section.
func flashCrowd(res Results) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	ours, others := res.Reports[0], res.Reports[1:]
	cfg := res.Workload
	w("## The flash crowd: the waiting room against two other designs\n\n")
	w("**Workload** (the same visitors, drawn from one seed, for every design): %s visitors, %s of them in the first minute and the rest evenly over the next %s; capacity %s visitors on the origin at once. %.0f%% never come back after their first request if it does not let them in, and %.0f%% give up while waiting (after 1 to 20 polls); the queue page refreshes every %s. Admitted visitors stay %s to %s and make a request every %s; half of them leave with a departure beacon, the other half just go idle. Each design runs on its own fresh redis-server; requests that fall in the same %s slot of simulated time go to the store concurrently (%d at most), as an edge sends them.\n\n",
		thousands(float64(cfg.Visitors)), thousands(float64(cfg.FlashCrowd)), cfg.Spread, thousands(float64(cfg.Capacity)),
		cfg.NoShowJoin*100, cfg.NoShowWait*100, cfg.Refresh, cfg.StayMin, cfg.StayMax, cfg.Activity, cfg.Batch, cfg.Concurrency)
	w("**The designs.** *%s*: this repository's store script through the production store client and the Upstash REST stand-in, the room being `{\"max_active_users\": %d}` with the timings of `sim.Timings`.", ours.Policy, ours.Capacity)
	w(" The other two are **models**, written from the designs' descriptions inside the simulator (`tools/sim/models.go`), not their vendors' code:")
	w(" *two-counter (model)* is the classic queue of Fastly's JavaScript queuing starter kit: a newcomer increments the length counter and reserves the position (2 calls), every request reads the cursor (1 call), a waiting request also counts itself in the current period (1 call) and the first in a new period expires that counter and advances the cursor (2 calls): up to six calls. Its rate is what the capacity serves at the mean stay, the rate an operator would set: the cursor advances by capacity × 10 s ÷ mean stay every 10 s.")
	w(" *unordered gate (model)* counts live sessions and lets in whoever asks while there is room: every request is one atomic script call.\n\n")

	w("### Ratios: the waiting room ÷ each model\n\n")
	w("A ratio below 1 means the waiting room's number is smaller. Lower is better for every row but utilisation and the visitors admitted.\n\n")
	w("| metric | %s |", ours.Policy)
	for _, o := range others {
		w(" %s | ratio |", o.Policy)
	}
	w("\n|---|---:|")
	for range others {
		w("---:|---:|")
	}
	w("\n")
	for _, row := range metrics {
		w("| %s | %s |", row.name, row.format(row.value(ours)))
		for _, o := range others {
			w(" %s | %s |", row.format(row.value(o)), ratioText(row.value(ours), row.value(o)))
		}
		w("\n")
	}
	w("\nSimulated event length: ")
	for i, r := range res.Reports {
		if i > 0 {
			w("; ")
		}
		w("%s %s (ran in %s)", r.Policy, r.Duration.Round(time.Second), r.Elapsed.Round(time.Second))
	}
	w(".\n\n")
	w("![Queue length, live visitors and admissions over time](%s)\n\n", res.Plot)
	w("### What each number means\n\n")
	for _, row := range metrics {
		w("- **%s**: %s\n", row.name, row.meaning)
	}
	return b.String()
}

// endToEndHeading opens the end-to-end section.
const endToEndHeading = "## End to end: the real wasm in the local host, both builds"

// endToEnd is the load through each build's wasm, side by side.
func endToEnd(res Results) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	m := res.Machine
	w("%s\n\n", endToEndHeading)
	var sizes []string
	for _, b := range res.Builds {
		sizes = append(sizes, fmt.Sprintf("%s (%s) %s bytes", b.Name, b.Toolchain, thousands(float64(b.Load.WasmBytes))))
	}
	if len(res.Builds) > 0 {
		l := res.Builds[0].Load
		w("%s visitors over real HTTP, %d requests in flight at once, against each build of `bin/main.wasm` (%s) in the project's local Compute host (wazero), with the Upstash REST stand-in, redis-server and the demo origin on the same machine. The room has places for half the visitors: the joins split between walking in and taking a ticket, then every waiting visitor loads the queue page once and every admitted one makes one request to the origin. A join is two requests, as a browser makes it: the first is answered with the arrival redirect (no store call), the second comes back with its cookie and joins; the join rows count visitors, and their latency and CPU cover both requests.\n\n",
			thousands(float64(l.Visitors)), l.Concurrency, strings.Join(sizes, "; "))
	}
	if res.Missing != "" {
		w("**Not measured: %s.**\n\n", res.Missing)
	}
	w("| request | build | requests | requests/s | p50 | p99 | max | host CPU per request | Redis CPU per request | store calls per request | answers |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for i := 0; i < mostPhases(res.Builds); i++ {
		for _, b := range res.Builds {
			if i >= len(b.Load.Phases) {
				continue
			}
			p := b.Load.Phases[i]
			var outcomes []string
			for k, v := range p.Outcomes {
				outcomes = append(outcomes, fmt.Sprintf("%s %s", thousands(float64(v)), k))
			}
			sort.Strings(outcomes)
			w("| %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %.2f | %s |\n", p.Kind, b.Name, thousands(float64(p.Requests)), p.PerSecond(),
				ms(p.P50), ms(p.P99), ms(p.Max), ms(p.CPUPerRequest()), ms(p.RedisCPU/time.Duration(max(1, p.Requests))),
				float64(p.StoreCalls)/float64(max(1, p.Requests)), strings.Join(outcomes, ", "))
		}
	}
	w("\n- **host CPU per request**: the benchmark process's user and system CPU time over the phase, divided by its requests. The process holds the host and its wasm sandboxes (the Go build serves up to six requests in one, as Viceroy lets a sandbox; the TinyGo build starts one for every request: see the reusable sandboxes' section), the REST stand-in, the demo origin and the load client; the host's share dominates. On %d cores a phase can use %d CPU-seconds per second, so requests/s ≈ %d ÷ CPU per request.\n", m.Cores, m.Cores, m.Cores)
	w("- **p50/p99/max**: time from sending the request to reading the whole answer, at the load client, including the wait for a free core.\n")
	w("- **store calls per request**: REST requests the service made to the stand-in. A join or a poll is one script call; the admitted path makes none within the session's heartbeat. A sandbox that finds the script not yet loaded in Redis makes one more (EVALSHA, then EVAL).\n")
	w("- This is the local host, not Fastly: it runs sandboxes as Viceroy does, but its speed says nothing about Fastly's. Real Compute bills per request and CPU time; the store calls are what this design controls. As Wasmtime (and so Viceroy) does, the host starts each instance's memory as a copy-on-write mapping of the module's initial memory rather than copying the data segments into it (since 2026-11-26; runs before then copied them); this changes nothing the guest sees. A smaller module is cheaper to instantiate, which is most of TinyGo's lead per request.\n")
	return b.String()
}

// mostPhases is the most load phases any build ran.
func mostPhases(builds []Build) int {
	n := 0
	for _, b := range builds {
		n = max(n, len(b.Load.Phases))
	}
	return n
}

// hotPaths is the native hot paths, then each build's in wasm.
func hotPaths(res Results) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Hot paths (Go benchmarks)\n\n")
	w("Native: `go test -run '^$' -bench . -benchmem ./match ./queue ./templates ./edge`: the work each request does apart from the store call.\n\n")
	w("| package | benchmark | ns/op | B/op | allocs/op |\n|---|---|---:|---:|---:|\n")
	for _, h := range res.HotPaths {
		w("| %s | %s | %s | %s | %d |\n", h.Package, h.Name, thousands(h.NsPerOp), thousands(float64(h.BytesPerOp)), h.Allocs)
	}
	var wasm []Build
	for _, b := range res.Builds {
		if len(b.HotPaths) > 0 {
			wasm = append(wasm, b)
		}
	}
	if len(wasm) > 0 {
		w("\nThe same benchmarks compiled to wasm by each compiler and run under wazero, the engine of the local host (Go: `GOOS=wasip1 GOARCH=wasm go test -tags nofastlyhostcalls -exec go_wasip1_wasm_exec`; TinyGo: `tinygo test -target=wasip1-wazero -tags nofastlyhostcalls`); a ratio below 1 means TinyGo's code is faster:\n\n")
		w("| package | benchmark |")
		for _, b := range wasm {
			w(" %s ns/op | %s B/op | %s allocs/op |", b.Name, b.Name, b.Name)
		}
		if len(wasm) == 2 {
			w(" %s ÷ %s |", wasm[1].Name, wasm[0].Name)
		}
		w("\n|---|---|%s", strings.Repeat("---:|", 3*len(wasm)))
		if len(wasm) == 2 {
			w("---:|")
		}
		w("\n")
		for _, h := range wasm[0].HotPaths {
			w("| %s | %s |", h.Package, h.Name)
			var ns []float64
			for _, b := range wasm {
				o, ok := findHotPath(b.HotPaths, h.Package, h.Name)
				if !ok {
					w(" – | – | – |")
					ns = append(ns, -1)
					continue
				}
				w(" %s | %s | %d |", thousands(o.NsPerOp), thousands(float64(o.BytesPerOp)), o.Allocs)
				ns = append(ns, o.NsPerOp)
			}
			if len(ns) == 2 {
				if ns[1] < 0 {
					w(" n/a |")
				} else {
					w(" %.2f× |", ns[1]/ns[0])
				}
			}
			w("\n")
		}
	}
	w("\n- **Sign** and **Verify**: an HS256 pass (JWT) signed for a new session; checked, with a valid and a tampered signature.\n")
	w("- **CookieValues**: finding the room's cookie in a Cookie header of six cookies. **Match**: finding the room for a path among ten rooms.\n")
	w("- **DecideSession**: the whole decision for an admitted visitor inside the heartbeat (read and verify the pass, no store call).\n")
	w("- **RenderQueue**: the queue page from a parsed template. **DefaultQueue**: the built-in queue page, found and rendered as a request does. **LoadSettings**: reading and checking the config store's settings with five rooms, which every request does.\n")
	w("- **LogLine**: a waiting visitor's structured log line (docs/operations.md, \"Logs\"): the decision noted, the signing keys read for the client hash, the country looked up, the line built and handed to the endpoint (memory here).\n")
	return b.String()
}

func findHotPath(hs []HotPath, pkg, name string) (HotPath, bool) {
	for _, h := range hs {
		if h.Package == pkg && h.Name == name {
			return h, true
		}
	}
	return HotPath{}, false
}

// metric is one row of the comparison.
type metric struct {
	name, meaning string
	value         func(sim.Report) float64
	format        func(float64) string
}

func count(v float64) string { return thousands(v) }
func fixed2(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
func percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }
func minutes(v float64) string {
	return time.Duration(v * float64(time.Minute)).Round(time.Second).String()
}
func kib(v float64) string { return thousands(v/1024) + " KiB" }

func perKind(kind string) metric {
	return metric{name: "store calls per " + kind + " request",
		meaning: "store calls made while answering one " + kind + " request, on average.",
		value: func(r sim.Report) float64 {
			if r.Requests[kind] == 0 {
				return -1
			}
			return r.CallsPer(kind)
		}, format: fixed2}
}

var metrics = []metric{
	{"store calls, total", "every store call the visitors' requests caused (the waiting room's Upstash bill is per command).",
		func(r sim.Report) float64 { return float64(r.TotalCalls()) }, count},
	{"store calls per admitted visitor", "total store calls ÷ visitors admitted: what serving one visitor costs.",
		func(r sim.Report) float64 { return r.CallsPerAdmitted() }, fixed2},
	{"store calls per request", "total store calls ÷ all visitor requests (joins, polls, admitted visitors' requests, beacons).",
		func(r sim.Report) float64 { return r.CallsPerRequest() }, fixed2},
	perKind("join"), perKind("poll"), perKind("session"), perKind("leave"),
	{"visitors admitted", "visitors who got in (the others left before their turn).",
		func(r sim.Report) float64 { return float64(r.Admitted) }, count},
	{"admitted without waiting", "visitors let in at their first request.",
		func(r sim.Report) float64 { return float64(r.WalkedIn) }, count},
	{"most live visitors", "the most visitors on the origin at once: admitted and not yet gone, whatever the design counts.",
		func(r sim.Report) float64 { return float64(r.MaxLive) }, count},
	{"capacity overshoot", "how far the most live visitors went past the capacity; 0 is exact.",
		func(r sim.Report) float64 { return float64(r.Overshoot) }, count},
	{"FIFO inversions", "visitors who kept polling and were overtaken by more than one refresh (" + sim.Refresh.String() + ") by someone who arrived later.",
		func(r sim.Report) float64 { return float64(r.Inversions) }, count},
	{"places lost", "visitors who kept polling and still lost their place.",
		func(r sim.Report) float64 { return float64(r.LostPlaces) }, count},
	{"utilisation while visitors wait", "live visitors ÷ capacity, averaged over the samples (every 5 s) taken while anyone waited: how much of the origin's capacity a queue kept busy. A visitor who went idle without a beacon still holds a place until the inactivity timeout (" + sim.Inactivity.String() + ") in the designs that count sessions.",
		func(r sim.Report) float64 { return r.Utilisation }, percent},
	{"time waited, p50", "arrival to admission, median over the admitted visitors who had to wait (those let in at their first request are left out).",
		func(r sim.Report) float64 { return r.WaitP50.Minutes() }, minutes},
	{"time waited, p90", "the 90th percentile.",
		func(r sim.Report) float64 { return r.WaitP90.Minutes() }, minutes},
	{"time waited, p99", "the 99th percentile: the unluckiest visitors.",
		func(r sim.Report) float64 { return r.WaitP99.Minutes() }, minutes},
	{"Redis memory, peak", "the most Redis allocated for the design's keys during the event (read once a simulated minute; client buffers, scripts and Redis's own start-up memory left out).",
		func(r sim.Report) float64 { return float64(r.RedisPeak) }, kib},
	{"Redis memory, at the end", "what the design's keys still took once every visitor was gone.",
		func(r sim.Report) float64 { return float64(r.RedisMemory) }, kib},
}

// ratioText is ours ÷ theirs, said plainly when either is zero.
func ratioText(ours, theirs float64) string {
	switch {
	case ours < 0 || theirs < 0:
		return "n/a"
	case ours == 0 && theirs == 0:
		return "both 0"
	case theirs == 0:
		return "∞ (theirs 0)"
	case ours == 0:
		return "0 (ours 0)"
	}
	r := ours / theirs
	if r >= 10 || r < 0.01 {
		return strconv.FormatFloat(r, 'g', 2, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// Ratio is ours ÷ theirs for the named metric, for a closing note.
func Ratio(name string, ours, theirs sim.Report) string {
	for _, m := range metrics {
		if m.name == name {
			return ratioText(m.value(ours), m.value(theirs))
		}
	}
	return "unknown metric " + name
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}

// thousands writes v rounded, with thin groups of three digits.
func thousands(v float64) string {
	n := int64(math.Round(v))
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
