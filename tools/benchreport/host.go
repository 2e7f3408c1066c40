package benchreport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ReuseHeading opens BENCHMARKS.md's section on reusable sandboxes, which
// make bench-host writes from tools/suites/e2e's benchmarks.
const ReuseHeading = "## Reusable sandboxes: fresh against reused, both builds"

// HostBench is one run of tools/suites/e2e's request benchmarks against
// one build's wasm: Results maps a benchmark's name (without the
// GOMAXPROCS suffix), e.g. "QueuePage/fresh", to its metrics by unit.
// Parts are the hot paths of a request compiled by the same compiler
// (FloorSection), if measured.
type HostBench struct {
	Build, Toolchain string
	Results          map[string]map[string]float64
	Parts            []HotPath
}

// ParseHostBench reads `go test -bench` output of the e2e benchmarks, with
// the metrics they report (p50-ms, p99-ms, cpu-ms/req, cpu-ms/reqN...).
// A benchmark run more than once (-count) keeps its least costly run, the
// one with the least guest CPU (or, without it, process CPU) per request:
// on a shared machine, the run others disturbed least.
func ParseHostBench(r io.Reader) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		name := benchName(f[0])
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", sc.Text(), err)
			}
			m[f[i+1]] = v
		}
		if old, ok := out[name]; !ok || cost(m) < cost(old) {
			out[name] = m
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no benchmark results in the local host's benchmark output")
	}
	return out, sc.Err()
}

// cost is a request benchmark's CPU per request, for ParseHostBench.
func cost(m map[string]float64) float64 {
	if v, ok := m["guest-ms/req"]; ok {
		return v
	}
	return m["cpu-ms/req"]
}

// HostBenchPattern is the -bench pattern of make bench-host's request
// benchmarks (its Makefile's HOST_BENCH), for the reuse and floor sections.
const HostBenchPattern = "QueuePage|Arrival|SnapshotPoll|Forwarded|Floor"

// hostRequests are the benchmarks of the section, each with its row's name.
var hostRequests = []struct{ bench, name string }{{"QueuePage", "queue page"}, {"Forwarded", "admitted"}}

// ReuseSection renders the reusable sandboxes' section from each build's
// benchmarks, run count times with requests requests each; missing says why a build
// was not measured ("" if none).
func ReuseSection(res Results, runs []HostBench, requests, count int, took time.Duration, missing string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("%s", sectionHead(ReuseHeading, res, took, "make bench-host"))
	w("One request at a time through the local host, each build's `bin/main.wasm` in turn (`cd tools && WASM=… go test -run '^$' -bench '%s' -benchtime %dx -count %d ./suites/e2e`, the least costly of the runs of each kept): a waiting visitor's poll (the queue page, one store call) and an admitted visitor's request (forwarded to the origin, no store call), %d of each, with `sandbox_requests` 1 (a fresh sandbox for every request, as before `fsthttp.ServeMany`) and 100 (reused as far as the host lets a sandbox serve, as Viceroy does).\n\n", HostBenchPattern, requests, count, requests)
	if missing != "" {
		w("**Not measured: %s.**\n\n", missing)
	}
	w("| request | build | sandboxes | CPU per request | CPU of a sandbox's 1st request | 2nd | 3rd | later | sandboxes started per request | p50 | p99 |\n")
	w("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, req := range hostRequests {
		for _, run := range runs {
			for _, mode := range []string{"fresh", "reused"} {
				m, ok := run.Results[req.bench+"/"+mode]
				if !ok {
					continue
				}
				nth := func(k int) string {
					if v, ok := m["cpu-ms/req"+strconv.Itoa(k)]; ok && (k == 1 || mode == "reused") {
						return msf(v)
					}
					return ""
				}
				lo, hi := -1.0, -1.0
				for k := 4; ; k++ {
					v, ok := m["cpu-ms/req"+strconv.Itoa(k)]
					if !ok {
						break
					}
					if lo < 0 || v < lo {
						lo = v
					}
					hi = max(hi, v)
				}
				later := ""
				if lo >= 0 && mode == "reused" {
					later = msf(lo) + " to " + msf(hi)
				}
				w("| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %.2f | %s | %s |\n", req.name, run.Build, run.Toolchain, mode,
					msf(m["cpu-ms/req"]), nth(1), nth(2), nth(3), later, m["sandboxes/req"], msf(m["p50-ms"]), msf(m["p99-ms"]))
			}
		}
	}
	w("\n- **CPU per request**: the benchmark process's user and system CPU time over the run ÷ requests; the process holds the host and its sandboxes, the REST stand-in, the demo origin and the client (redis-server is another process). The columns by place in the sandbox time each request alone: a sandbox's 1st request pays for starting it.\n")
	w("- **sandboxes started per request**: 1 when every request has a fresh sandbox; with reuse, 1 ÷ the requests a sandbox served.\n")
	w("- Why a reused TinyGo sandbox once cost more than a fresh one, and why the TinyGo build's sandboxes serve 20 requests by default, was found by hand with an instrumented TinyGo 0.33 runtime on 2026-11-23: `git show fc82808 -- BENCHMARKS.md` holds that record.\n")
	w("- This is the local host (wazero), not Fastly: what a fresh sandbox costs there is Fastly's business and may differ; the figures compare the two ways of running the same wasm on the same host.\n")
	return b.String()
}

func msf(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" }
