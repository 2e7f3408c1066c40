// Package load drives the real service, bin/main.wasm in the local Compute
// host, over real HTTP with many visitors at once, and measures what each
// kind of request costs: a newcomer's join, a waiting visitor's queue page,
// an admitted visitor's request forwarded to the origin.
//
// The room has places for half the visitors, so the joins split between
// walking straight in and taking a ticket; then every waiting visitor polls
// once (the queue page) and every admitted one makes one request (the
// admitted path). Sessions and places outlive the run, so no request of
// the last two phases changes who is where.
package load

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Options say what to run and how hard.
type Options struct {
	Wasm, Manifest, CacheDir string
	// Visitors join, Concurrency of them at a time.
	Visitors, Concurrency int
	// Log receives the stack's log lines; nil discards them.
	Log *log.Logger
}

// Phase is one kind of request, measured.
type Phase struct {
	Kind     string
	Requests int
	// Elapsed is the phase's wall time; Latency its requests' times.
	Elapsed       time.Duration
	P50, P99, Max time.Duration
	// CPU is the benchmark process's CPU time (the host and its wasm
	// instances, the REST stand-in, the demo origin and the load client)
	// and RedisCPU redis-server's, over the phase.
	CPU, RedisCPU time.Duration
	// StoreCalls is the REST requests the service made to the store.
	StoreCalls int
	// Outcomes counts the answers by what they were.
	Outcomes map[string]int
}

// PerSecond is the phase's request rate.
func (p Phase) PerSecond() float64 { return float64(p.Requests) / p.Elapsed.Seconds() }

// CPUPerRequest is the process CPU time one request took.
func (p Phase) CPUPerRequest() time.Duration { return p.CPU / time.Duration(max(1, p.Requests)) }

// Report is a whole run.
type Report struct {
	Visitors, Concurrency int
	WasmBytes             int64
	Phases                []Phase
}

// room has places for half the visitors; inactivity, claim and queue
// timeouts far beyond the run keep everyone where they are; every visitor
// comes from one address, so the per-client join limit is off. The POP's
// snapshot of the line is off: with it, how many queue pages ask the store
// would depend on how many fit in one TTL on this machine, and the phase
// measures a poll that asks the store (what a poll from the snapshot costs
// is TestStoreCallsPerRequestKind's and the simulator's to say).
func room(visitors int) string {
	return fmt.Sprintf(`{"paths":["/"],"max_active_users":%d,"refresh":10,"inactivity_timeout":3600,`+
		`"claim_window":3600,"queue_timeout":3600,"session_duration":7200,"joins_per_ip_per_minute":0,"snapshot_ttl":0}`, visitors/2)
}

// Run starts the stack and plays the three phases.
func Run(ctx context.Context, o Options) (Report, error) {
	rep := Report{Visitors: o.Visitors, Concurrency: o.Concurrency}
	fi, err := os.Stat(o.Wasm)
	if err != nil {
		return rep, fmt.Errorf("%w (run make build)", err)
	}
	rep.WasmBytes = fi.Size()
	if o.Log == nil {
		o.Log = log.New(io.Discard, "", 0)
	}
	st, err := devstack.Start(ctx, devstack.Options{
		Manifest: o.Manifest, Wasm: o.Wasm, CacheDir: o.CacheDir, Log: o.Log, Timeout: time.Minute,
		Addr: "127.0.0.1:0", UpstashAddr: "127.0.0.1:0", OriginAddr: "127.0.0.1:0",
		Adjust: func(m *fastlyhost.Manifest) {
			cfg := m.ConfigStores[devstack.ConfigStore]
			cfg["rooms"] = "shop"
			cfg["room.shop"] = room(o.Visitors)
			// 32 instances on two cores wait their turn for the CPU;
			// the default 400 ms would count that as a store outage.
			cfg["store_timeout"] = "10"
		},
	})
	if err != nil {
		return rep, err
	}
	defer st.Close()
	d := &driver{stack: st, redis: resp.NewPool(st.RedisAddr, 1),
		// The driver follows the arrival redirect itself, with the cookie.
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Concurrency},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	visitors := make([]*visitor, o.Visitors)
	for i := range visitors {
		visitors[i] = &visitor{}
	}
	join, err := d.phase(ctx, "join", visitors, o.Concurrency)
	if err != nil {
		return rep, err
	}
	var waiting, admitted []*visitor
	for _, v := range visitors {
		if v.admitted {
			admitted = append(admitted, v)
		} else {
			waiting = append(waiting, v)
		}
	}
	queuePage, err := d.phase(ctx, "queue page", waiting, o.Concurrency)
	if err != nil {
		return rep, err
	}
	forwarded, err := d.phase(ctx, "admitted", admitted, o.Concurrency)
	rep.Phases = []Phase{join, queuePage, forwarded}
	return rep, err
}

type visitor struct {
	cookie   string
	admitted bool
}

type driver struct {
	stack  *devstack.Stack
	redis  *resp.Pool
	client *http.Client
}

// phase sends one request for each visitor, concurrency at a time, and
// checks every answer is what the visitor should see.
func (d *driver) phase(ctx context.Context, kind string, visitors []*visitor, concurrency int) (Phase, error) {
	p := Phase{Kind: kind, Requests: len(visitors), Outcomes: map[string]int{}}
	d.stack.Upstash.ResetStats()
	cpu0, redis0 := ProcessCPU(), d.redisCPU()
	times := make([]time.Duration, len(visitors))
	errs := make([]error, len(visitors))
	outcomes := make([]string, len(visitors))
	next := make(chan int)
	var wg sync.WaitGroup
	began := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t := time.Now()
				outcomes[i], errs[i] = d.visit(ctx, visitors[i], kind)
				times[i] = time.Since(t)
			}
		}()
	}
	for i := range visitors {
		next <- i
	}
	close(next)
	wg.Wait()
	p.Elapsed = time.Since(began)
	p.CPU, p.RedisCPU = ProcessCPU()-cpu0, d.redisCPU()-redis0
	for _, n := range d.stack.Upstash.Stats().Requests {
		p.StoreCalls += n
	}
	for i, err := range errs {
		if err != nil {
			return p, fmt.Errorf("%s, visitor %d: %w", kind, i, err)
		}
		p.Outcomes[outcomes[i]]++
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	if n := len(times); n > 0 {
		p.P50, p.P99, p.Max = times[n/2], times[(n*99)/100], times[n-1]
	}
	return p, nil
}

// visit makes the visitor's request and checks the answer against what
// the phase expects.
func (d *driver) visit(ctx context.Context, v *visitor, kind string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.stack.HostURL+"/", nil)
	if err != nil {
		return "", err
	}
	if v.cookie != "" {
		req.Header.Set("Cookie", "wr_shop="+v.cookie)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return "", err
	}
	for _, c := range resp.Cookies() {
		if c.Name == "wr_shop" {
			v.cookie = c.Value
		}
	}
	if kind == "join" && resp.StatusCode == http.StatusTemporaryRedirect && v.cookie != "" {
		// The arrival redirect: a browser comes straight back with the
		// cookie, and only then joins.
		return d.visit(ctx, v, kind)
	}
	origin := strings.Contains(string(body), "You reached the origin")
	queued := strings.Contains(string(body), "You are in line")
	switch {
	case resp.StatusCode != http.StatusOK:
	case kind == "join" && (origin || queued):
		v.admitted = origin
		if origin {
			return "admitted", nil
		}
		return "queued", nil
	case kind == "queue page" && queued, kind == "admitted" && origin:
		return kind, nil
	}
	return "", fmt.Errorf("unexpected answer to a %s request: %d %.200s", kind, resp.StatusCode, body)
}

// ProcessCPU is the user and system time this process has used.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is the CPU time redis-server reports it has used, or 0 when it
// does not say (the embedded Redis).
func (d *driver) redisCPU() time.Duration {
	v, err := d.redis.Do("INFO", "cpu")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, line := range strings.Split(v.Str, "\r\n") {
		name, value, _ := strings.Cut(line, ":")
		if name == "used_cpu_sys" || name == "used_cpu_user" {
			s, _ := strconv.ParseFloat(value, 64)
			total += time.Duration(s * float64(time.Second))
		}
	}
	return total
}
