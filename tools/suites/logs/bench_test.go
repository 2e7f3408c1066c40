package logs

import (
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
)

// BenchmarkLogLine is the per-request cost of the structured line in the
// local host: a bypassed request (no store call; the demo origin's answer)
// through the real wasm, one at a time, without and with log_endpoint,
// reporting the median and 99th percentile. The difference is the line:
// gathering it, reading the signing keys for the client hash, the
// geolocation lookup, building it and the host call that writes it.
func BenchmarkLogLine(b *testing.B) {
	for _, tc := range []struct{ name, endpoint string }{{"without", ""}, {"with", endpoint}} {
		b.Run(tc.name, func(b *testing.B) {
			e := start(b, map[string]string{edge.KeyLogEndpoint: tc.endpoint})
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				began := time.Now()
				if resp := e.get("", "/static/app.css"); resp.StatusCode != http.StatusOK {
					b.Fatalf("request %d: %d", i, resp.StatusCode)
				}
				times = append(times, time.Since(began))
			}
			b.StopTimer()
			if n := len(e.entries()); (tc.endpoint == "") != (n == 0) {
				b.Fatalf("%d entries with log_endpoint %q", n, tc.endpoint)
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
