package fastlyhost

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a host clock that moves only when a test moves it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock {
	return &testClock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// erlStep is one request to testdata/erlguest: the host's clock moves by
// advance first, then the query's call answers want ("value|error").
type erlStep struct {
	advance time.Duration
	query   string
	want    string
}

// erlSteps go through every call of the SDK's erl package, request after
// request (so instance after instance), with the host's clock moved
// between them.
var erlSteps = []erlStep{
	// A rate counter counts each entry of each counter, by whole second.
	{0, "op=inc&rc=joins&entry=a&delta=1", "|<nil>"},
	{0, "op=inc&rc=joins&entry=a&delta=1", "|<nil>"},
	{0, "op=inc&rc=joins&entry=a&delta=1", "|<nil>"},
	{0, "op=count&rc=joins&entry=a&duration=10", "3|<nil>"},
	{0, "op=count&rc=joins&entry=a&duration=60", "3|<nil>"},
	{0, "op=rate&rc=joins&entry=a&window=1", "3|<nil>"},
	{0, "op=rate&rc=joins&entry=a&window=10", "0|<nil>"}, // 3/10, truncated
	{0, "op=count&rc=joins&entry=b&duration=60", "0|<nil>"},
	{0, "op=count&rc=other&entry=a&duration=60", "0|<nil>"},
	{0, "op=inc&rc=joins&entry=a&delta=1000", "|<nil>"},
	{0, "op=rate&rc=joins&entry=a&window=10", "100|<nil>"}, // 1003/10
	{0, "op=rate&rc=joins&entry=a&window=60", "16|<nil>"},  // 1003/60
	// Refused arguments change nothing; a delta of 0 counts nothing.
	{0, "op=inc&rc=joins&entry=a&delta=1001", "|invalid argument"},
	{0, "op=inc&rc=joins&entry=a&delta=0", "|<nil>"},
	{0, "op=count&rc=joins&entry=a&duration=10", "1003|<nil>"},
	{0, "op=rate&rc=joins&entry=a&window=0", "0|invalid argument"},
	{0, "op=count&rc=joins&entry=a&duration=0", "0|invalid argument"},
	{0, "op=inc&rc=" + strings.Repeat("n", 65) + "&entry=a&delta=1", "|invalid argument"},
	{0, "op=inc&rc=joins&entry=" + strings.Repeat("e", 65) + "&delta=1", "|invalid argument"},
	{0, "op=inc&rc=" + strings.Repeat("n", 64) + "&entry=" + strings.Repeat("e", 64) + "&delta=1", "|<nil>"},
	// Windows slide by whole seconds: the 10 s one holds this second and
	// the nine before it.
	{9 * time.Second, "op=count&rc=joins&entry=a&duration=10", "1003|<nil>"},
	{0, "op=rate&rc=joins&entry=a&window=1", "0|<nil>"},
	{time.Second, "op=count&rc=joins&entry=a&duration=10", "0|<nil>"},
	{0, "op=count&rc=joins&entry=a&duration=20", "1003|<nil>"},
	{0, "op=inc&rc=joins&entry=a&delta=2", "|<nil>"},
	{0, "op=count&rc=joins&entry=a&duration=60", "1005|<nil>"},
	// At +60 s, 60 s hold +1 s to +60 s: the increments of +10 s only.
	{50 * time.Second, "op=count&rc=joins&entry=a&duration=60", "2|<nil>"},
	{0, "op=count&rc=joins&entry=a&duration=50", "0|<nil>"},
	{10 * time.Second, "op=count&rc=joins&entry=a&duration=60", "0|<nil>"},
	// A penalty box holds an entry for whole minutes, 1 to 60; boxes and
	// counters have names of their own.
	{0, "op=has&pb=pen&entry=x", "false|<nil>"},
	{0, "op=add&pb=pen&entry=x&ttl=90s", "|<nil>"},
	{0, "op=has&pb=pen&entry=x", "true|<nil>"},
	{0, "op=has&pb=pen&entry=y", "false|<nil>"},
	{0, "op=has&pb=joins&entry=a", "false|<nil>"},
	{59 * time.Second, "op=has&pb=pen&entry=x", "true|<nil>"},
	{time.Second, "op=has&pb=pen&entry=x", "false|<nil>"},
	{0, "op=add&pb=pen&entry=x&ttl=59s", "|invalid argument"},
	{0, "op=add&pb=pen&entry=x&ttl=61m", "|invalid argument"},
	{0, "op=has&pb=pen&entry=x", "false|<nil>"},
	{0, "op=add&pb=pen&entry=x&ttl=60m59s", "|<nil>"},
	{59*time.Minute + 59*time.Second, "op=has&pb=pen&entry=x", "true|<nil>"},
	{time.Second, "op=has&pb=pen&entry=x", "false|<nil>"},
	// Adding again replaces the time left, even with a shorter one.
	{0, "op=add&pb=pen&entry=z&ttl=5m", "|<nil>"},
	{time.Minute, "op=add&pb=pen&entry=z&ttl=1m", "|<nil>"},
	{time.Minute, "op=has&pb=pen&entry=z", "false|<nil>"},
	// CheckRate counts, and over the limit puts the entry in the box.
	{0, "op=check&rc=req&pb=bad&entry=c&delta=10&window=1&limit=10&ttl=1m", "false|<nil>"},
	{0, "op=check&rc=req&pb=bad&entry=c&delta=1&window=1&limit=10&ttl=1m", "true|<nil>"},
	{0, "op=has&pb=bad&entry=c", "true|<nil>"},
	{0, "op=check&rc=req&pb=bad&entry=d&delta=1&window=1&limit=10&ttl=1m", "false|<nil>"},
	// Refused policies neither count nor punish.
	{0, "op=check&rc=req&pb=bad&entry=e&delta=1000&window=1&limit=9&ttl=1m", "false|invalid argument"},
	{0, "op=check&rc=req&pb=bad&entry=e&delta=1000&window=1&limit=10001&ttl=1m", "false|invalid argument"},
	{0, "op=check&rc=req&pb=bad&entry=e&delta=1000&window=0&limit=10&ttl=1m", "false|invalid argument"},
	{0, "op=check&rc=req&pb=bad&entry=e&delta=1000&window=1&limit=10&ttl=59s", "false|invalid argument"},
	{0, "op=check&rc=req&pb=bad&entry=e&delta=1001&window=1&limit=10&ttl=1m", "false|invalid argument"},
	{0, "op=count&rc=req&entry=e&duration=60", "0|<nil>"},
	{0, "op=has&pb=bad&entry=e", "false|<nil>"},
	{0, "op=count&rc=req&entry=c&duration=10", "11|<nil>"},
	// Under the limit again, the entry stays in the box for its minute.
	{time.Second, "op=check&rc=req&pb=bad&entry=c&delta=0&window=1&limit=10&ttl=1m", "true|<nil>"},
	{59 * time.Second, "op=check&rc=req&pb=bad&entry=c&delta=1&window=1&limit=10&ttl=1m", "false|<nil>"},
	// The limit is a rate: over a 10 s window, 10 per second is 100.
	{0, "op=check&rc=req&pb=bad&entry=f&delta=100&window=10&limit=10&ttl=1m", "false|<nil>"},
	{9 * time.Second, "op=check&rc=req&pb=bad&entry=f&delta=1&window=10&limit=10&ttl=1m", "true|<nil>"},
}

// TestERLThroughTheSDK runs erlSteps against testdata/erlguest built with
// Go and with TinyGo, then increments one entry from many instances at
// once: the count is exact.
func TestERLThroughTheSDK(t *testing.T) {
	builds := []struct {
		name  string
		build func(t *testing.T) []byte
	}{
		{"Go", func(t *testing.T) []byte { return mustBuildGuest(t, "erlguest") }},
		{"TinyGo", func(t *testing.T) []byte { return buildTinyGoGuest(t, "erlguest") }},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			clock := newTestClock()
			srv, logs := serveHostWith(t, b.build(t), &Manifest{}, Options{Timeout: 30 * time.Second, Clock: clock.Now})
			for i, step := range erlSteps {
				clock.Advance(step.advance)
				if got, err := erlGet(srv.URL + "/?" + step.query); err != nil || got != step.want {
					t.Fatalf("step %d (%s, at %s): %q, %v, want %q", i, step.query, clock.Now().Format(time.TimeOnly), got, err, step.want)
				}
			}
			const instances = 20
			var wg sync.WaitGroup
			for range instances {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if got, err := erlGet(srv.URL + "/?op=inc&rc=many&entry=p&delta=1"); err != nil || got != "|<nil>" {
						t.Errorf("concurrent increment: %q, %v", got, err)
					}
				}()
			}
			wg.Wait()
			if got, err := erlGet(srv.URL + "/?op=count&rc=many&entry=p&duration=10"); got != fmt.Sprintf("%d|<nil>", instances) {
				t.Errorf("after %d concurrent increments: %q, %v", instances, got, err)
			}
			for _, want := range []string{
				"fastly_erl.ratecounter_increment: delta 1001: the platform takes 0 to 1000: Inval",
				"fastly_erl.penaltybox_add: time to live 59 s is 0 whole minutes",
				"fastly_erl.check_rate: limit 9 per second: the platform takes 10 to 10000: Inval",
				"fastly_erl.ratecounter_lookup_rate: rate window 0 s",
				"fastly_erl.ratecounter_increment: rate counter name of 65 bytes",
			} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("no log line with %q in\n%s", want, logs)
				}
			}
		})
	}
}

// erlGet answers the body of a GET of target.
func erlGet(target string) (string, error) {
	resp, err := http.Get(target)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

// TestERLArguments checks each argument's range, with the raw values the
// SDK's types keep a guest from passing.
func TestERLArguments(t *testing.T) {
	ok := func(err error) bool { return err == nil }
	tests := []struct {
		name string
		ok   bool
	}{
		{"window 0", ok(erlWindow(0))}, {"window 1", !ok(erlWindow(1))}, {"window 5", ok(erlWindow(5))},
		{"window 10", !ok(erlWindow(10))}, {"window 60", !ok(erlWindow(60))}, {"window 61", ok(erlWindow(61))},
		{"duration 0", ok(erlDuration(0))}, {"duration 5", ok(erlDuration(5))}, {"duration 10", !ok(erlDuration(10))},
		{"duration 15", ok(erlDuration(15))}, {"duration 60", !ok(erlDuration(60))}, {"duration 70", ok(erlDuration(70))},
		{"delta 0", !ok(erlDelta(0))}, {"delta 1000", !ok(erlDelta(1000))}, {"delta 1001", ok(erlDelta(1001))},
		{"limit 9", ok(erlLimit(9))}, {"limit 10", !ok(erlLimit(10))}, {"limit 10000", !ok(erlLimit(10000))}, {"limit 10001", ok(erlLimit(10001))},
	}
	for _, tc := range tests {
		if tc.ok {
			t.Errorf("%s: accepted where the platform refuses it, or the reverse", tc.name)
		}
	}
	ttls := []struct {
		seconds uint32
		want    time.Duration // 0: refused
	}{
		{0, 0}, {59, 0}, {60, time.Minute}, {119, time.Minute}, {120, 2 * time.Minute},
		{3600, time.Hour}, {3659, time.Hour}, {3660, 0}, {1 << 31, 0},
	}
	for _, tc := range ttls {
		got, err := erlTTL(tc.seconds)
		if got != tc.want || (err == nil) != (tc.want != 0) {
			t.Errorf("ttl %d s: %v, %v, want %v", tc.seconds, got, err, tc.want)
		}
	}
}

// TestERLCapacity fills a counter and a box: a new counter entry evicts
// the least recently incremented, a new box entry the one with the least
// time left.
func TestERLCapacity(t *testing.T) {
	clock := newTestClock()
	e := newERLState(clock.Now, 3)
	at := func(d time.Duration, act func(now time.Time)) {
		clock.Advance(d)
		act(e.lock())
		e.unlock()
	}
	at(0, func(now time.Time) {
		for _, k := range []string{"a", "b", "c"} {
			e.counter("rc").increment(k, 1, now.Unix())
		}
		e.box("pb").add("p", 3*time.Minute, now)
		e.box("pb").add("q", time.Minute, now)
		e.box("pb").add("r", 2*time.Minute, now)
	})
	at(time.Second, func(now time.Time) {
		e.counter("rc").increment("a", 1, now.Unix())
		e.box("pb").add("p", 3*time.Minute, now) // present: evicts nothing
	})
	at(time.Second, func(now time.Time) {
		e.counter("rc").increment("d", 1, now.Unix())
		e.box("pb").add("s", 5*time.Minute, now)
		counts := map[string]uint32{}
		for _, k := range []string{"a", "b", "c", "d"} {
			counts[k] = e.counters["rc"].count(k, 60, now.Unix())
		}
		if want := map[string]uint32{"a": 2, "b": 0, "c": 1, "d": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("counts %v, want %v (b evicted)", counts, want)
		}
		has := map[string]bool{}
		for _, k := range []string{"p", "q", "r", "s"} {
			has[k] = e.boxes["pb"].has(k, now)
		}
		if want := map[string]bool{"p": true, "q": false, "r": true, "s": true}; fmt.Sprint(has) != fmt.Sprint(want) {
			t.Errorf("box %v, want %v (q evicted)", has, want)
		}
	})
}

// TestERLMemoryIsBounded checks that counters and boxes whose entries have
// all expired are dropped, by the sweep of any later call.
func TestERLMemoryIsBounded(t *testing.T) {
	clock := newTestClock()
	e := newERLState(clock.Now, erlCapacity)
	now := e.lock()
	for i := range 1000 {
		e.counter(fmt.Sprint("rc", i%10)).increment(fmt.Sprint(i), 1, now.Unix())
		e.box(fmt.Sprint("pb", i%10)).add(fmt.Sprint(i), time.Minute, now)
	}
	e.unlock()
	sizes := func() string {
		e.lock()
		defer e.unlock()
		entries := 0
		for _, c := range e.counters {
			entries += c.lru.Len()
		}
		for _, b := range e.boxes {
			entries += len(b.entries) + len(b.byExpiry)
		}
		return fmt.Sprintf("%d counters, %d boxes, %d entries", len(e.counters), len(e.boxes), entries)
	}
	clock.Advance(59 * time.Second)
	if got, want := sizes(), "10 counters, 10 boxes, 3000 entries"; got != want {
		t.Errorf("after 59 s: %s, want %s", got, want)
	}
	clock.Advance(time.Second)
	if got, want := sizes(), "0 counters, 0 boxes, 0 entries"; got != want {
		t.Errorf("after 60 s: %s, want %s", got, want)
	}
}

// TestERLClockBackwards checks that the state's time holds still, rather
// than running back, when the host's clock is set back.
func TestERLClockBackwards(t *testing.T) {
	clock := newTestClock()
	e := newERLState(clock.Now, erlCapacity)
	step := func(d time.Duration, delta uint32) uint32 {
		clock.Advance(d)
		now := e.lock()
		defer e.unlock()
		e.counter("rc").increment("k", delta, now.Unix())
		return e.counters["rc"].count("k", 10, now.Unix())
	}
	if got := step(0, 1); got != 1 {
		t.Fatalf("first count %d", got)
	}
	if got := step(-30*time.Second, 1); got != 2 {
		t.Errorf("after the clock went back 30 s: %d, want 2", got)
	}
	if got := step(39*time.Second, 0); got != 2 {
		t.Errorf("9 s after the latest time: %d, want 2", got)
	}
	if got := step(time.Second, 0); got != 0 {
		t.Errorf("10 s after the latest time: %d, want 0", got)
	}
}
