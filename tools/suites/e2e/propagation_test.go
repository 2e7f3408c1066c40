package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// BenchmarkPropagation measures how long an operator's pause or resume,
// made at one POP (FRA), takes to reach a visitor far from the front at
// another (LHR), whose polls that POP answers from its snapshot of the
// line: at most the snapshot's TTL (1 s by default) by design, plus a
// poll. Each op is one pause or resume; ms/op counts from the moment the
// admin panel answered to the first poll at LHR that says so.
func BenchmarkPropagation(b *testing.B) {
	e := startStack(b, loadTimeout, strings.Replace(room, `"queue_timeout":300`, `"queue_timeout":300,"joins_per_ip_per_minute":0`, 1), nil, "FRA", "LHR")
	lhr := e.stack.POPs[1].URL
	(&visitor{e: e}).get("/") // takes the burst
	var far *visitor
	for range 60 {
		far = &visitor{e: e, pop: lhr}
		far.get("/")
	}
	paused := func() bool {
		var p struct {
			Status string `json:"status"`
			Paused bool   `json:"paused"`
		}
		a := far.get("/", "Accept", "application/json")
		if err := json.Unmarshal([]byte(a.body), &p); err != nil || p.Status != "waiting" {
			b.Fatalf("the far visitor's poll: %d %s (%v)", a.status, a.body, err)
		}
		return p.Paused
	}
	var total, worst time.Duration
	polls := 0
	b.ResetTimer()
	for i := range b.N {
		action, want := "pause", true
		if i%2 == 1 {
			action, want = "resume", false
		}
		e.control(action)
		start := time.Now()
		for polls++; paused() != want; polls++ {
			if time.Since(start) > time.Minute {
				b.Fatalf("%s at FRA not seen at LHR after a minute", action)
			}
		}
		took := time.Since(start)
		total, worst = total+took, max(worst, took)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-propagation/op")
	b.ReportMetric(float64(worst.Milliseconds()), "ms-worst")
	b.ReportMetric(float64(polls)/float64(b.N), "polls/op")
}
