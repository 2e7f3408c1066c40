// Command erlguest is a Compute service that makes one Edge Rate Limiting
// call per request through the SDK's erl package, for the host's ERL
// tests. The query names the call and its arguments:
//
//	op=inc    rc entry delta                 RateCounter.Increment
//	op=rate   rc entry window (1, 10, 60)    RateCounter.LookupRate
//	op=count  rc entry duration (10 ... 60)  RateCounter.LookupCount
//	op=add    pb entry ttl (a Go duration)   PenaltyBox.Add
//	op=has    pb entry                       PenaltyBox.Has
//	op=check  rc pb entry delta window limit ttl  RateLimiter.CheckRate
//	op=client                                the client's address
//
// A window or duration of 0 is the type's zero value, the one invalid
// value the SDK lets a caller pass. Without entry, the entry is the
// client's address, as a service keys its limits. The answer is
// "value|error", the value empty for calls that return none.
package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/fastly/compute-sdk-go/erl"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

func main() {
	windows := map[string]erl.RateWindow{"0": {}, "1": erl.RateWindow1s, "10": erl.RateWindow10s, "60": erl.RateWindow60s}
	durations := map[string]erl.CounterDuration{"0": {},
		"10": erl.CounterDuration10s, "20": erl.CounterDuration20s, "30": erl.CounterDuration30s,
		"40": erl.CounterDuration40s, "50": erl.CounterDuration50s, "60": erl.CounterDuration60s}
	fsthttp.ServeFunc(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		q := r.URL.Query()
		rc, pb := erl.OpenRateCounter(q.Get("rc")), erl.OpenPenaltyBox(q.Get("pb"))
		entry := q.Get("entry")
		if !q.Has("entry") {
			entry = r.RemoteAddr
		}
		number := func(key string) uint32 {
			n, _ := strconv.ParseUint(q.Get(key), 10, 32)
			return uint32(n)
		}
		ttl, _ := time.ParseDuration(q.Get("ttl"))
		switch q.Get("op") {
		case "inc":
			fmt.Fprintf(w, "|%v", rc.Increment(entry, number("delta")))
		case "rate":
			v, err := rc.LookupRate(entry, windows[q.Get("window")])
			fmt.Fprintf(w, "%d|%v", v, err)
		case "count":
			v, err := rc.LookupCount(entry, durations[q.Get("duration")])
			fmt.Fprintf(w, "%d|%v", v, err)
		case "add":
			fmt.Fprintf(w, "|%v", pb.Add(entry, ttl))
		case "has":
			v, err := pb.Has(entry)
			fmt.Fprintf(w, "%v|%v", v, err)
		case "check":
			v, err := erl.NewRateLimiter(rc, pb).CheckRate(entry, number("delta"), &erl.Policy{
				RateWindow: windows[q.Get("window")], MaxRate: number("limit"), PenaltyBoxDuration: ttl,
			})
			fmt.Fprintf(w, "%v|%v", v, err)
		case "client":
			fmt.Fprint(w, r.RemoteAddr)
		default:
			fsthttp.Error(w, "unknown op", fsthttp.StatusBadRequest)
		}
	})
}
