package benchreport

import (
	"strings"
	"testing"
	"time"
)

func TestFloorSection(t *testing.T) {
	with := func(m, more map[string]float64) map[string]float64 {
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	reused := func(guest, cpu float64, later ...float64) map[string]float64 {
		m := map[string]float64{"guest-ms/req": guest, "cpu-ms/req": cpu, "body-bytes": 7782, "cpu-ms/req1": 20, "sandboxes/req": 0.2}
		for k, v := range later {
			m["cpu-ms/req"+string(rune('2'+k))] = v
		}
		return m
	}
	goRun := HostBench{Build: "Go", Toolchain: "go1.x", Results: map[string]map[string]float64{
		"Forwarded/fresh":    {"guest-ms/req": 30, "cpu-ms/req": 36},
		"FloorForward/fresh": {"guest-ms/req": 15, "cpu-ms/req": 18},
		"Forwarded/reused": with(reused(5.5, 8, 4, 5), map[string]float64{"host-calls/req": 61.25, "calls/fastly_config_store.get": 11.83,
			"calls/fastly_geo.lookup": 1, "calls/fastly_http_req.new": 1.917, "calls/fastly_log.write": 1.05}),
		"FloorForward/reused": with(reused(5, 7, 2, 3), map[string]float64{"host-calls/req": 42.67, "calls/fastly_config_store.get": 0.1667,
			"calls/fastly_http_req.new": 2}),
		"SnapshotPoll/reused":   reused(9, 11, 5),
		"FloorPage/reused":      reused(4, 5, 1),
		"QueuePage/reused":      reused(10, 12, 6),
		"Arrival/fresh":         {"guest-ms/req": 28, "cpu-ms/req": 30},
		"FloorPage/fresh":       {"guest-ms/req": 16, "cpu-ms/req": 18},
		"SnapshotPoll/fresh":    {"guest-ms/req": 30, "cpu-ms/req": 34},
		"QueuePage/fresh":       {"guest-ms/req": 31, "cpu-ms/req": 35},
		"NotAFloorBench/reused": {"guest-ms/req": 1},
	}, Parts: []HotPath{
		{Package: "edge", Name: "LoadSettings", NsPerOp: 900000}, // a disturbed run
		{Package: "edge", Name: "LoadSettings", NsPerOp: 300000},
		{Package: "queue", Name: "Verify/valid", NsPerOp: 60000},
		{Package: "edge", Name: "QueuePage", NsPerOp: 120000},
		{Package: "edge", Name: "LogLine", NsPerOp: 40000},
	}}
	tinyRun := HostBench{Build: "TinyGo", Toolchain: "0.33.0", Results: map[string]map[string]float64{
		"Forwarded/reused":    reused(3, 5),
		"FloorForward/reused": reused(2, 4),
	}}
	res := Results{Date: time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC), Command: "make bench-host"}
	md := FloorSection(res, []HostBench{goRun, tinyRun}, 300, 2, 90*time.Second, "")
	for _, want := range []string{
		FloorHeading + "\n\nMeasured by `make bench-host` on 2026-11-26 15:00 UTC (this section took 1m30s).",
		"-benchtime 300x -count 2 ./suites/e2e`), one request at a time through the local host, 300 of each",
		"| admitted (forwarded to the origin) | Go (go1.x) | fresh | 30.00 ms | 15.00 ms | 2.00× | ≤ 1.2×: goal missed | 36.00 ms | 18.00 ms | 2.00× |  |  |  |",
		"| admitted (forwarded to the origin) | Go (go1.x) | reused | 5.50 ms | 5.00 ms | 1.10× | ≤ 1.2×: goal met | 8.00 ms | 7.00 ms | 1.14× | 4.50 ms | 2.50 ms | 1.80× |",
		"| admitted (forwarded to the origin) | TinyGo (0.33.0) | reused | 3.00 ms | 2.00 ms | 1.50× | ≤ 1.2×: goal missed |",
		"| poll answered from the POP's snapshot | Go (go1.x) | reused | 9.00 ms | 4.00 ms | 2.25× | ≤ 2×: goal missed |",
		"| poll answered from the POP's snapshot | Go (go1.x) | fresh | 30.00 ms | 16.00 ms | 1.88× | ≤ 2×: goal met |",
		"| poll answered by the store (one store call) | Go (go1.x) | reused | 10.00 ms | 4.00 ms | 2.50× |  |",
		"| newcomer's queue page (joins: one store call) | Go (go1.x) | fresh | 28.00 ms | 16.00 ms | 1.75× |  |",
		// The excess over the floor, reused: admitted 500 µs, snapshot poll 5,000 µs.
		"| parsing settings (the config store's values, five rooms) | Go (go1.x) | 300 µs | 60.0% | 6.0% |",
		"| rendering the queue page (language, place, template, policy) | Go (go1.x) | 120 µs | – | 2.4% |",
		"| **the parts together** | Go (go1.x) | | 80.0% | 10.4% |",
		"| **the excess** (guest CPU over the floor's, reused sandboxes) | Go (go1.x) | | 500 µs | 5,000 µs |",
		"| admitted (forwarded to the origin) | Go (go1.x) | 61.2 | 42.7 | `fastly_config_store.get` +11.7, `fastly_log.write` +1.1, `fastly_geo.lookup` +1.0 |",
		// Start: ((20 - 4.5) - (20 - 2.5)) * 0.2 = -0.4 ms; own work 4.5 - 2.5 ms.
		"| admitted (forwarded to the origin) | Go (go1.x) | 500 µs | -400 µs | 2,000 µs |",
		"(the table's body sizes: Go: queue page 7,782 bytes, floor 7,782 bytes).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| Arrival") || strings.Contains(md, "| TinyGo (0.33.0) | 300") {
		t.Errorf("a benchmark's name, or a build without parts, in the tables:\n%s", md)
	}
	if missing := FloorSection(res, nil, 300, 2, 0, "TinyGo (not installed)"); !strings.Contains(missing, "**Not measured: TinyGo (not installed).**") {
		t.Errorf("the section does not say what was not measured:\n%s", missing)
	}
}

func TestMoreCalls(t *testing.T) {
	m, f := map[string]float64{"cpu-ms/req": 9}, map[string]float64{"calls/a": 1}
	for i, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		m["calls/"+name] = float64(10 - i)
	}
	m["calls/h"] = 0.05 // less than a tenth of a call more: not named
	// a and b tie at 9 more: by name.
	want := "`a` +9.0, `b` +9.0, `c` +8.0, `d` +7.0, `e` +6.0, `f` +5.0, 1 more"
	if got := moreCalls(m, f); got != want {
		t.Errorf("moreCalls = %q, want %q", got, want)
	}
}

// TestParseHostBenchKeepsTheLeastCostlyRun: of a benchmark's runs
// (-count), the one with the least guest CPU per request is kept, whole.
func TestParseHostBenchKeepsTheLeastCostlyRun(t *testing.T) {
	out := "BenchmarkForwarded/reused-2 \t 300 \t 1 ns/op \t 9.5 guest-ms/req \t 4.0 cpu-ms/req2\n" +
		"BenchmarkForwarded/reused-2 \t 300 \t 1 ns/op \t 7.5 guest-ms/req \t 5.0 cpu-ms/req2\n" +
		"BenchmarkForwarded/reused-2 \t 300 \t 1 ns/op \t 8.5 guest-ms/req \t 3.0 cpu-ms/req2\n"
	m, err := ParseHostBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if got := m["Forwarded/reused"]; got["guest-ms/req"] != 7.5 || got["cpu-ms/req2"] != 5 {
		t.Errorf("kept %v, want the second run", got)
	}
}
