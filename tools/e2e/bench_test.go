package e2e

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchRequests times one kind of request through the real wasm, one at a
// time, and reports the median and 99th percentile per request.
func benchRequests(b *testing.B, prepare func(e *env) *visitor, want string) {
	e := start(b, loadTimeout)
	v := prepare(e)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
		if err != nil || !strings.Contains(body.String(), want) {
			b.Fatalf("request %d: %d %v %.100s", i, resp.StatusCode, err, body.String())
		}
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkQueuePage is a waiting visitor's poll: one instance, one store
// call, the queue page.
func BenchmarkQueuePage(b *testing.B) {
	benchRequests(b, func(e *env) *visitor {
		(&visitor{e: e}).get("/")
		v := &visitor{e: e}
		v.get("/")
		return v
	}, "You are in line")
}

// BenchmarkForwarded is an admitted visitor's request: one instance, no
// store call, forwarded to the origin and streamed back.
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
