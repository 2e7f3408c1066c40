package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/load"
)

// sandboxModes are the two ways the benchmarks run the service: a fresh
// sandbox for every request (sandbox_requests 1, as before fsthttp.ServeMany),
// and sandboxes reused as far as the host lets them.
var sandboxModes = []struct {
	name   string
	adjust func(*fastlyhost.Manifest)
}{
	{"fresh", sandboxRequestsAt("1")},
	{"reused", sandboxRequestsAt("100")},
}

// sandboxRequestsAt sets the config store's sandbox_requests to n.
func sandboxRequestsAt(n string) func(*fastlyhost.Manifest) {
	return func(m *fastlyhost.Manifest) { m.ConfigStores[devstack.ConfigStore][edge.KeySandboxRequests] = n }
}

// hostBench is one kind of request the benchmarks time through the local
// host.
type hostBench struct {
	// floor is the environment variable naming the bare guest to run
	// (floor/, built by make bench-host); "" runs the service (WASM).
	floor string
	// room is the shop room's definition, for the service.
	room string
	// prepare readies n requests and returns the i-th's path and cookie.
	prepare func(e *env, n int) func(i int) (path, cookie string)
	// want is in every answer's body.
	want string
	// maxStoreCalls bounds the store calls per request: more, and the
	// benchmark times another kind of request than it says.
	maxStoreCalls float64
}

// benchRequests times one kind of request through the wasm, one at a
// time, fresh sandboxes against reused ones, and reports per request:
//
//   - guest-ms/req, the CPU time of the sandboxes (fastlyhost's
//     Options.GuestCPU: each instance's thread, from its start to its
//     end, which holds the guest's work and the host's in its calls, and
//     nothing else of the process), what the floors are measured by;
//   - cpu-ms/req, the CPU time of this whole process (the host and its
//     instances, its HTTP server, the REST stand-in, the origin and the
//     client), which the guest's CPU leaves out; and cpu-ms/reqN, that of
//     the requests that were a sandbox's Nth;
//   - host-calls/req, the guest's calls of the host's fastly functions,
//     and calls/NAME, those of each;
//   - the median and 99th percentile latency, the sandboxes started, the
//     store calls made and the size of the answer's body.
//
// CPU time, not wall time: two cores are shared with whatever else runs,
// and a request's wait for its backend is not its cost.
func benchRequests(b *testing.B, hb hostBench) {
	wasm := wasmPath()
	if hb.floor != "" {
		if wasm = os.Getenv(hb.floor); wasm == "" {
			b.Skipf("%s names no floor guest (make bench-host builds them)", hb.floor)
		}
	}
	room := hb.room
	if room == "" {
		room = roomForBench
	}
	for _, mode := range sandboxModes {
		b.Run(mode.name, func(b *testing.B) {
			e := startStackWith(b, loadTimeout, room, mode.adjust, func(o *devstack.Options) {
				o.Wasm, o.GuestCPU = wasm, true
			})
			request := hb.prepare(e, b.N)
			host := e.stack.Host
			waitIdle(b, host)
			e.restCalls()
			times := make([]time.Duration, 0, b.N)
			bodyBytes := 0
			_, sandboxes0 := host.Served()
			guest0, calls0 := host.GuestCPU(), host.HostCalls()
			// cpuIn[k] is the CPU time of the requests that were a
			// sandbox's k+1th (the host lets one serve six).
			var cpuIn [sandboxRequests]time.Duration
			var countIn [sandboxRequests]int
			k, started := 0, sandboxes0
			b.ResetTimer()
			cpu0 := load.ProcessCPU()
			for i := 0; i < b.N; i++ {
				path, cookie := request(i)
				before := load.ProcessCPU()
				req, _ := http.NewRequest(http.MethodGet, e.stack.HostURL+path, nil)
				if cookie != "" {
					req.Header.Set("Cookie", "wr_shop="+cookie)
				}
				began := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var body strings.Builder
				_, err = readBody(&body, resp)
				times = append(times, time.Since(began))
				bodyBytes = body.Len()
				// Served one at a time, a sandbox's requests are
				// consecutive: a request that started one is its first.
				if _, sandboxes := host.Served(); sandboxes != started {
					k, started = 0, sandboxes
				} else {
					k = min(k+1, sandboxRequests-1)
				}
				cpuIn[k] += load.ProcessCPU() - before
				countIn[k]++
				if err != nil || !strings.Contains(body.String(), hb.want) {
					b.Fatalf("request %d: %d %v %.100s", i, resp.StatusCode, err, body.String())
				}
			}
			cpu := load.ProcessCPU() - cpu0
			b.StopTimer()
			// An instance's CPU is counted as it ends: a reused sandbox
			// waits a second for another request first.
			waitIdle(b, host)
			guest := host.GuestCPU() - guest0
			calls := float64(e.restCalls()) / float64(b.N)
			if calls > hb.maxStoreCalls {
				b.Fatalf("%.2f store calls per request, want at most %.2f", calls, hb.maxStoreCalls)
			}
			_, sandboxes := host.Served()
			hostCalls := 0.0
			for name, n := range host.HostCalls() {
				if d := float64(n-calls0[name]) / float64(b.N); d > 0 {
					b.ReportMetric(d, "calls/"+name)
					hostCalls += d
				}
			}
			b.ReportMetric(hostCalls, "host-calls/req")
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(guest.Microseconds())/1000/float64(b.N), "guest-ms/req")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/req")
			b.ReportMetric(float64(sandboxes-sandboxes0)/float64(b.N), "sandboxes/req")
			b.ReportMetric(calls, "store-calls/req")
			b.ReportMetric(float64(bodyBytes), "body-bytes")
			for k, n := range countIn {
				if n > 0 {
					b.ReportMetric(float64(cpuIn[k].Microseconds())/1000/float64(n), fmt.Sprintf("cpu-ms/req%d", k+1))
				}
			}
		})
	}
}

// waitIdle waits until host runs no instance, so that GuestCPU holds every
// request served so far.
func waitIdle(b *testing.B, host *fastlyhost.Host) {
	b.Helper()
	for deadline := time.Now().Add(30 * time.Second); host.Live() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d instances still running after 30 s", host.Live())
		}
	}
}

// roomForBench is the room the service's requests are timed in: e2e's,
// with no limit on joins from one address (every visitor comes from this
// one) and the longest snapshot_ttl, so a poll answered from the POP's
// snapshot asks the store once in 10 s.
var roomForBench = strings.Replace(room, `"queue_timeout":300`, `"queue_timeout":300,"joins_per_ip_per_minute":0,"snapshot_ttl":10`, 1)

// same asks the same request n times.
func same(path, cookie string) func(int) (string, string) {
	return func(int) (string, string) { return path, cookie }
}

// waiting joins the line behind ahead others, the first of whom takes the
// room's burst, and returns the newcomer.
func waiting(e *env, ahead int) *visitor {
	for i := 0; i < ahead; i++ {
		(&visitor{e: e}).get("/")
	}
	v := &visitor{e: e}
	if a := v.get("/"); !strings.Contains(a.body, "You are in line") {
		e.t.Fatalf("join: %d %.100s", a.status, a.body)
	}
	return v
}

// queuePage is a waiting visitor's poll answered by the store: one store
// call (the visitor is next in line, too near the front for the snapshot).
var queuePage = hostBench{
	prepare: func(e *env, _ int) func(int) (string, string) {
		return same("/", waiting(e, 1).cookie)
	},
	want:          "You are in line",
	maxStoreCalls: 1,
}

// BenchmarkQueuePage is a waiting visitor's poll: one store call, the
// queue page.
func BenchmarkQueuePage(b *testing.B) { benchRequests(b, queuePage) }

// BenchmarkArrival is a newcomer's queue page: the request that follows
// the arrival redirect with its arrival pass, joins the line (one store
// call) and answers the page. The redirects are taken before the timing.
func BenchmarkArrival(b *testing.B) {
	benchRequests(b, hostBench{
		prepare: func(e *env, n int) func(int) (string, string) {
			(&visitor{e: e}).get("/") // takes the burst
			cookies := make([]string, n)
			for i := range cookies {
				v := &visitor{e: e}
				if a := v.do1(http.MethodGet, "/", nil); a.status != http.StatusTemporaryRedirect || v.cookie == "" {
					e.t.Fatalf("arrival: %d %.100s", a.status, a.body)
				}
				cookies[i] = v.cookie
			}
			return func(i int) (string, string) { return "/", cookies[i] }
		},
		want:          "You are in line",
		maxStoreCalls: 1,
	})
}

// BenchmarkSnapshotPoll is the poll of a visitor far from the front,
// answered from the POP's snapshot of the line: no store call but the
// snapshot's refill, once in snapshot_ttl.
func BenchmarkSnapshotPoll(b *testing.B) {
	benchRequests(b, hostBench{
		prepare: func(e *env, _ int) func(int) (string, string) {
			// The near front is the fast-poll zone (5 tickets here), the
			// burst, and the admissions the snapshot saw (the burst's one)
			// at their pace over two refreshes and two snapshot_ttl: up
			// to 22 tickets when a second passed between the admission
			// and the snapshot. This visitor's first poll fills the
			// snapshot.
			v := waiting(e, 40)
			v.get("/")
			return same("/", v.cookie)
		},
		want:          "You are in line",
		maxStoreCalls: 0.1,
	})
}

// BenchmarkForwarded is an admitted visitor's request: no store call,
// forwarded to the origin and streamed back.
func BenchmarkForwarded(b *testing.B) {
	benchRequests(b, hostBench{
		prepare: func(e *env, _ int) func(int) (string, string) {
			v := &visitor{e: e}
			v.get("/")
			return same("/", v.cookie)
		},
		want: "You reached the origin",
	})
}

// BenchmarkFloorForward is the floor of an admitted request: the bare
// guest floor/forward, which only forwards the request to the origin.
func BenchmarkFloorForward(b *testing.B) {
	benchRequests(b, hostBench{
		floor:   "FLOOR_FORWARD_WASM",
		prepare: func(*env, int) func(int) (string, string) { return same("/", "") },
		want:    "You reached the origin",
	})
}

// BenchmarkFloorPage is the floor of a queue page: the bare guest
// floor/page, answering a fixed page of the size of the service's queue
// page (BenchmarkQueuePage's, measured first).
func BenchmarkFloorPage(b *testing.B) {
	if os.Getenv("FLOOR_PAGE_WASM") == "" {
		b.Skip("FLOOR_PAGE_WASM names no floor guest (make bench-host builds them)")
	}
	e := startStack(b, loadTimeout, roomForBench, nil)
	path, cookie := queuePage.prepare(e, 1)(0)
	page := (&visitor{e: e, cookie: cookie}).get(path)
	if !strings.Contains(page.body, queuePage.want) {
		b.Fatalf("queue page: %d %.100s", page.status, page.body)
	}
	e.stack.Close()
	benchRequests(b, hostBench{
		floor:   "FLOOR_PAGE_WASM",
		prepare: func(*env, int) func(int) (string, string) { return same("/?bytes="+strconv.Itoa(len(page.body)), "") },
		want:    "You are in line",
	})
}

func readBody(dst *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(dst, resp.Body)
}
