package benchreport

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FloorHeading opens BENCHMARKS.md's section on the floor of a request,
// which make bench-host writes from tools/suites/e2e's benchmarks.
const FloorHeading = "## The floor of a request: each request against a bare guest's"

// A floorRow is one of the section's comparisons: a request of the
// service's (its benchmark), the floor it is measured against, and the
// goal for the ratio (0: none).
type floorRow struct {
	bench, floor, name string
	goal               float64
}

// floorRows are the section's comparisons, in its order.
var floorRows = []floorRow{
	{"Forwarded", "FloorForward", "admitted (forwarded to the origin)", 1.2},
	{"SnapshotPoll", "FloorPage", "poll answered from the POP's snapshot", 2},
	{"QueuePage", "FloorPage", "poll answered by the store (one store call)", 0},
	{"Arrival", "FloorPage", "newcomer's queue page (joins: one store call)", 0},
}

// floorParts are the parts of a request measured apart, by the hot-path
// benchmarks compiled to wasm by each build's compiler: package,
// benchmark, what it is, and whether an admitted request does it.
var floorParts = []struct {
	pkg, bench, name string
	admitted         bool
}{
	{"edge", "LoadSettings", "parsing settings (the config store's values, five rooms)", true},
	{"queue", "Verify/valid", "verifying the pass (HS256)", true},
	{"edge", "QueuePage", "rendering the queue page (language, place, template, policy)", false},
	{"edge", "LogLine", "logging (the structured log line)", true},
}

// FloorSection renders the floor's section from each build's request
// benchmarks (requests each, count runs of each) and hot paths
// (HostBench.Parts);
// missing says why a build was not measured ("" if none).
func FloorSection(res Results, runs []HostBench, requests, count int, took time.Duration, missing string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("%s", sectionHead(FloorHeading, res, took, "make bench-host"))
	w("How close is each request to the least it could cost? The floors are two bare guests in `floor/`, built by `tools/build-wasm` with the service's compilers, target and flags: `floor/forward` only forwards the request to the origin backend, its body streamed (the floor of an admitted request), and `floor/page` only answers a fixed page of the size of the service's queue page (the floor of a queue page). ")
	w("They run in the same benchmark run as the service (`-bench '%s' -benchtime %dx -count %d ./suites/e2e`), one request at a time through the local host, %d of each, fresh and reused sandboxes as in the section above; of the %d runs of each benchmark the least costly (least guest CPU) is kept, the one other processes on the machine disturbed least.\n\n", HostBenchPattern, requests, count, requests, count)
	if missing != "" {
		w("**Not measured: %s.**\n\n", missing)
	}
	w("Goals (issue 25): an admitted request within 1.2× of its floor, a poll answered from the POP's snapshot within 2×.\n\n")
	w("| request | build | sandboxes | guest CPU per request | its floor's | ratio | goal | process CPU per request | its floor's | ratio | a reused sandbox's later requests, process CPU | its floor's | ratio |\n")
	w("|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	eachPair(runs, []string{"fresh", "reused"}, func(row floorRow, run HostBench, mode string, m, f map[string]float64) {
		goal := ""
		if row.goal > 0 {
			goal = goalText(m["guest-ms/req"], f["guest-ms/req"], row.goal)
		}
		later, floorLater, laterRatio := "", "", ""
		l, lok := laterRequests(m)
		fl, flok := laterRequests(f)
		if mode == "reused" && lok && flok {
			later, floorLater, laterRatio = msf2(l), msf2(fl), timesFloor(l, fl)
		}
		w("| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.name, run.Build, run.Toolchain, mode,
			msf2(m["guest-ms/req"]), msf2(f["guest-ms/req"]), timesFloor(m["guest-ms/req"], f["guest-ms/req"]), goal,
			msf2(m["cpu-ms/req"]), msf2(f["cpu-ms/req"]), timesFloor(m["cpu-ms/req"], f["cpu-ms/req"]),
			later, floorLater, laterRatio)
	})
	w("\n- **guest CPU per request**: the CPU time of the sandboxes over the run ÷ requests. The local host clocks each instance on the thread it runs on, pinned there from its start to its end (`fastlyhost.Options.GuestCPU`, the clock behind `get_vcpu_ms`): the guest's own work, its start (instantiation and the runtime's start-up) and the host's work inside its calls (config, secret and KV stores, the cache, the log endpoints, handing a send to the HTTP client), not the host's HTTP server, the backends, the REST stand-in or the client. It is the nearest the local host comes to what Fastly bills as vCPU time. CPU, not wall time: the two cores are shared, and a wait for a backend costs no CPU.\n")
	w("- **process CPU per request**: the whole benchmark process's user and system time during the requests ÷ requests, as in the section above: the guest CPU plus the host's HTTP server, the demo origin, the REST stand-in (for a store call) and the client, which the floors share. **A reused sandbox's later requests**: the process CPU of the requests after a sandbox's first (the mean of its 2nd, 3rd... requests' own figures): a request without a sandbox's start.\n")
	w("- **goal**: met or not by the guest CPU, the stricter figure (the process's shared costs bring every ratio nearer 1).\n")
	w("- The page floor's size is the service's queue page as BenchmarkQueuePage gets it (the table's body sizes: %s).\n", pageSizes(runs))
	w("\n### Where the rest goes\n\n")
	w("The parts of a request measured apart: tools' hot-path benchmarks (`go test -run '^$' -benchmem -count 5 -bench 'LoadSettings|Verify|QueuePage|LogLine' ./edge ./queue`, the fastest of the five runs) compiled to wasm by each build's compiler and run under wazero, the local host's engine, each in its own loop. Their figures are wall time per operation (all `go test` gives), which another process on the machine lengthens: the fastest run is the least disturbed. A loop's figure is an estimate of the same work in a request, not a bound: its caches are warm, but its collector runs as its garbage piles up, and TinyGo's test binary starts with the default small heap where the service's starts with 8 MiB and collects seldom (see the section above), so TinyGo's figures hold collections a request rarely pays. Each is set against the guest CPU a request of reused sandboxes costs over its floor:\n\n")
	w("| part | build | µs per request (wasm) | share of the admitted request's excess | share of the snapshot poll's excess |\n")
	w("|---|---|---:|---:|---:|\n")
	for _, run := range runs {
		if len(run.Parts) == 0 {
			continue
		}
		admitted := excess(run, "Forwarded", "FloorForward")
		poll := excess(run, "SnapshotPoll", "FloorPage")
		var sumAdmitted, sumPoll float64
		for _, p := range floorParts {
			h, ok := fastestHotPath(run.Parts, p.pkg, p.bench)
			if !ok {
				w("| %s | %s (%s) | not measured | | |\n", p.name, run.Build, run.Toolchain)
				continue
			}
			us := h.NsPerOp / 1000
			shareAdmitted := "–"
			if p.admitted {
				shareAdmitted = shareOf(us, admitted)
				sumAdmitted += us
			}
			sumPoll += us
			w("| %s | %s (%s) | %s | %s | %s |\n", p.name, run.Build, run.Toolchain, usf(us), shareAdmitted, shareOf(us, poll))
		}
		w("| **the parts together** | %s (%s) | | %s | %s |\n", run.Build, run.Toolchain, shareOf(sumAdmitted, admitted), shareOf(sumPoll, poll))
		w("| **the excess** (guest CPU over the floor's, reused sandboxes) | %s (%s) | | %s | %s |\n", run.Build, run.Toolchain, excessText(admitted), excessText(poll))
	}
	w("\nThe excess split in two, from the process CPU of each place in a reused sandbox (the section's last three columns; the two sides share the rest of the process, which cancels): **the sandbox's start**, what a sandbox's first request costs over its later ones, more than the floor's does, spread over the requests a sandbox serves; and **each request's own work**, a later request's over the floor's later request's.\n\n")
	w("| request | build | excess (guest CPU) | the sandbox's start, per request | each request's own work |\n|---|---|---:|---:|---:|\n")
	eachPair(runs, []string{"reused"}, func(row floorRow, run HostBench, _ string, m, f map[string]float64) {
		l, lok := laterRequests(m)
		fl, flok := laterRequests(f)
		if !lok || !flok {
			return
		}
		start := ((m["cpu-ms/req1"] - l) - (f["cpu-ms/req1"] - fl)) * m["sandboxes/req"]
		w("| %s | %s (%s) | %s | %s | %s |\n", row.name, run.Build, run.Toolchain,
			usf((m["guest-ms/req"]-f["guest-ms/req"])*1000), usf(start*1000), usf((l-fl)*1000))
	})
	w("\nThe host calls each request makes, against its floor's (reused sandboxes; the guest's calls of the host's `fastly_*` functions, counted by the local host, WASI's not among them), and those it makes more of:\n\n")
	w("| request | build | host calls per request | its floor's | the calls it makes more of, per request |\n|---|---|---:|---:|---|\n")
	eachPair(runs, []string{"reused"}, func(row floorRow, run HostBench, _ string, m, f map[string]float64) {
		w("| %s | %s (%s) | %s | %s | %s |\n", row.name, run.Build, run.Toolchain, fixed1(m["host-calls/req"]), fixed1(f["host-calls/req"]), moreCalls(m, f))
	})
	w("\n- The excess the parts leave is work the hot-path loops do not see: a larger module's start in each sandbox (a reused sandbox's first request pays it), the host calls a request makes that the loops replace with memory (each setting read from the config store, the signing keys from the secret store, the log endpoint's write, the cache read of the snapshot), and the collector's work in a short-lived heap.\n")
	w("- This is the local host (wazero), not Fastly; both sides of each ratio run the same way on the same host.\n")
	return b.String()
}

// fastestHotPath is the fastest of a benchmark's runs (-count): on a
// shared machine, the run others disturbed least.
func fastestHotPath(hs []HotPath, pkg, name string) (HotPath, bool) {
	var best HotPath
	found := false
	for _, h := range hs {
		if h.Package == pkg && h.Name == name && (!found || h.NsPerOp < best.NsPerOp) {
			best, found = h, true
		}
	}
	return best, found
}

// eachPair calls do with each comparison's results and its floor's in
// each run, for each of modes, where both were measured.
func eachPair(runs []HostBench, modes []string, do func(row floorRow, run HostBench, mode string, m, f map[string]float64)) {
	for _, row := range floorRows {
		for _, run := range runs {
			for _, mode := range modes {
				m, ok := run.Results[row.bench+"/"+mode]
				f, fok := run.Results[row.floor+"/"+mode]
				if ok && fok {
					do(row, run, mode, m, f)
				}
			}
		}
	}
}

// goalText says whether ours is within limit times the floor's.
func goalText(ours, floor, limit float64) string {
	return "≤ " + strconv.FormatFloat(limit, 'f', -1, 64) + "×: " + goal(floor > 0 && ours/floor <= limit)
}

// laterRequests is the mean process CPU of a reused sandbox's requests
// after its first (cpu-ms/req2, 3...), if it served any.
func laterRequests(m map[string]float64) (float64, bool) {
	sum, n := 0.0, 0
	for k := 2; ; k++ {
		v, ok := m["cpu-ms/req"+strconv.Itoa(k)]
		if !ok {
			break
		}
		sum, n = sum+v, n+1
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// excess is the guest CPU per request, in µs, a reused sandbox's request
// of bench costs over floor's, or -1 when either is missing.
func excess(run HostBench, bench, floor string) float64 {
	m, ok := run.Results[bench+"/reused"]
	f, fok := run.Results[floor+"/reused"]
	if !ok || !fok {
		return -1
	}
	return (m["guest-ms/req"] - f["guest-ms/req"]) * 1000
}

func excessText(us float64) string {
	if us < 0 {
		return "not measured"
	}
	return usf(us)
}

func shareOf(us, of float64) string {
	if of <= 0 {
		return "n/a"
	}
	return percent(us / of)
}

// timesFloor is ours as a multiple of the floor's.
func timesFloor(ours, floor float64) string {
	if floor <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(ours/floor, 'f', 2, 64) + "×"
}

// pageSizes lists the body sizes of the service's queue page and of the
// page floor in each run.
func pageSizes(runs []HostBench) string {
	var parts []string
	for _, run := range runs {
		q, ok := run.Results["QueuePage/reused"]["body-bytes"]
		f, fok := run.Results["FloorPage/reused"]["body-bytes"]
		if ok && fok {
			parts = append(parts, fmt.Sprintf("%s: queue page %s bytes, floor %s bytes", run.Build, thousands(q), thousands(f)))
		}
	}
	return strings.Join(parts, "; ")
}

// maxCallsShown bounds the host functions moreCalls names.
const maxCallsShown = 6

// moreCalls lists the host functions m's requests call more often than
// f's, by a tenth of a call per request or more, the most first (the
// first maxCallsShown, then how many more).
func moreCalls(m, f map[string]float64) string {
	type more struct {
		name string
		by   float64
	}
	var ms []more
	for unit, v := range m {
		name, ok := strings.CutPrefix(unit, "calls/")
		if ok && v-f[unit] >= 0.1 {
			ms = append(ms, more{name, v - f[unit]})
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].by != ms[j].by {
			return ms[i].by > ms[j].by
		}
		return ms[i].name < ms[j].name
	})
	var parts []string
	for i, c := range ms {
		if i == maxCallsShown {
			parts = append(parts, fmt.Sprintf("%d more", len(ms)-i))
			break
		}
		parts = append(parts, "`"+c.name+"` +"+fixed1(c.by))
	}
	return strings.Join(parts, ", ")
}

func fixed1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func msf2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " ms" }
func usf(v float64) string  { return thousands(v) + " µs" }
