package e2e

import (
	"fmt"
	"io"
	"net/http"
	"sort"
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

// benchRequests times one kind of request through the real wasm, one at a
// time, fresh sandboxes against reused ones, and reports per request the
// median and 99th percentile latency, the CPU time of this process (the
// host and its instances, the REST stand-in, the origin and the client),
// and the sandboxes started.
func benchRequests(b *testing.B, prepare func(e *env) *visitor, want string) {
	for _, mode := range sandboxModes {
		b.Run(mode.name, func(b *testing.B) {
			e := startStack(b, loadTimeout, room, mode.adjust)
			v := prepare(e)
			times := make([]time.Duration, 0, b.N)
			_, sandboxes0 := e.stack.Host.Served()
			// cpuIn[k] is the CPU time of the requests that were a
			// sandbox's k+1th (the host lets one serve six).
			var cpuIn [sandboxRequests]time.Duration
			var countIn [sandboxRequests]int
			b.ResetTimer()
			cpu0 := load.ProcessCPU()
			for i := 0; i < b.N; i++ {
				before := load.ProcessCPU()
				req, _ := http.NewRequest(http.MethodGet, e.stack.HostURL+"/", nil)
				if v.cookie != "" {
					req.Header.Set("Cookie", "wr_shop="+v.cookie)
				}
				began := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var body strings.Builder
				_, err = readBody(&body, resp)
				times = append(times, time.Since(began))
				// Served one at a time, a sandbox's requests are
				// consecutive: the host numbers them from 0.
				requests, _ := e.stack.Host.Served()
				k := (requests - 1) % sandboxRequests
				if mode.name == "fresh" {
					k = 0
				}
				cpuIn[k] += load.ProcessCPU() - before
				countIn[k]++
				if err != nil || !strings.Contains(body.String(), want) {
					b.Fatalf("request %d: %d %v %.100s", i, resp.StatusCode, err, body.String())
				}
			}
			cpu := load.ProcessCPU() - cpu0
			b.StopTimer()
			_, sandboxes := e.stack.Host.Served()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/req")
			b.ReportMetric(float64(sandboxes-sandboxes0)/float64(b.N), "sandboxes/req")
			for k, n := range countIn {
				if n > 0 {
					b.ReportMetric(float64(cpuIn[k].Microseconds())/1000/float64(n), fmt.Sprintf("cpu-ms/req%d", k+1))
				}
			}
		})
	}
}

// BenchmarkQueuePage is a waiting visitor's poll: one store call, the
// queue page.
func BenchmarkQueuePage(b *testing.B) {
	benchRequests(b, func(e *env) *visitor {
		(&visitor{e: e}).get("/")
		v := &visitor{e: e}
		v.get("/")
		return v
	}, "You are in line")
}

// BenchmarkForwarded is an admitted visitor's request: no store call,
// forwarded to the origin and streamed back.
func BenchmarkForwarded(b *testing.B) {
	benchRequests(b, func(e *env) *visitor {
		v := &visitor{e: e}
		v.get("/")
		return v
	}, "You reached the origin")
}

func readBody(dst *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(dst, resp.Body)
}
