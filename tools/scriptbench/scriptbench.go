// Package scriptbench measures what one call of the store's script
// (store/line.lua) costs Redis: the CPU per call INFO commandstats counts
// (usec_per_call of EVALSHA) for each operation on one room whose line holds
// a given number of waiting tickets, and the calls one Redis core serves
// when 32 clients poll that room at once.
//
// It drives the script only through package store's public API, on its
// own redis-server (tools/redisproc) behind the REST stand-in
// (tools/upstashdev), so the same code measures the script of another
// commit: make bench-script builds it once against this tree and once
// against the baseline's root module (a go.mod replace), and writes both
// results, side by side, into BENCHMARKS.md. That is why it imports
// nothing else of the repository.
//
// Time is virtual: every call passes its own now, so the line can be
// filled for minutes of wall time while it stands at one instant, and no
// ticket lapses.
package scriptbench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/redisproc"
	"github.com/edgequeue/waitingroom/tools/resp"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// Config is what to measure.
type Config struct {
	// Waiting are the line lengths measured, each on a fresh line.
	Waiting []int
	// Calls is how many calls each operation is measured over (at most
	// store.MaxCallsPerOp: the claims are called in by one admit), in
	// Rounds rounds of as many calls each, each counted on its own.
	Calls, Rounds int
	// Clients call the script at once while an operation is measured.
	Clients int
	// SaturationClients poll at once in the saturation run, which makes
	// SaturationCalls calls.
	SaturationClients, SaturationCalls int
	// FillClients join at once while the line is filled.
	FillClients int
	// Log, when set, is told of progress.
	Log func(format string, a ...any) `json:"-"`
}

// Default is the configuration make bench-script measures with.
var Default = Config{Waiting: []int{1000, 100000, 1000000}, Calls: 2000, Rounds: 10, Clients: 4,
	SaturationClients: 32, SaturationCalls: 20000, FillClients: 64}

// The operations, in the order they are measured on each line.
const (
	OpStats = "stats" // Stats
	OpPoll  = "poll"  // Poll of a waiting ticket far from the front
	OpJoin  = "join"  // Join of a new arrival
	OpClaim = "claim" // Poll of a called ticket, which becomes a session
	OpRenew = "renew" // Renew of a live session
	OpEnd   = "end"   // End of a live session
)

// Ops are the operations measured, in order.
var Ops = []string{OpStats, OpPoll, OpJoin, OpClaim, OpRenew, OpEnd}

// Policy is the room's policy: first come, first served, 6,000 called a
// minute, up to 100,000 active, and the settings' defaults otherwise. The
// rate calls a ticket every 10 ms of virtual time, so the calling code runs
// as it does in a live room; the capacity never binds.
var Policy = store.Policy{Mode: store.Fifo, PerMinute: 6000, Burst: 1, Capacity: 100000,
	ClaimWindow: 30 * time.Second, SessionTTL: 90 * time.Second, QueueTimeout: 15 * time.Minute,
	Refresh: 10 * time.Second, CatchUp: 10 * time.Second, Heartbeat: 30 * time.Second, PriorityShare: 0.2}

// PolicyText describes Policy for the report.
const PolicyText = "first come, first served; 6,000 called a minute (burst 1); capacity 100,000 (never reached); " +
	"claim window 30 s, inactivity 90 s, heartbeat 30 s, queue timeout 15 min, refresh 10 s"

// Step is how far virtual time moves per call: over a run of tens of
// thousands of calls, far less than every timeout.
const Step = 100 * time.Microsecond

// Result is one run: every line length measured, on one redis-server.
type Result struct {
	Redis  string
	Config Config
	Lines  []Line
}

// Line is one line length's measurements.
type Line struct {
	// Waiting is the line's length when its operations were measured.
	Waiting int
	// Fill is the wall time its tickets took to join.
	Fill time.Duration
	// Ops are the operations, in the order of Ops.
	Ops        []Op
	Saturation Saturation
}

// Op is one operation measured over Calls calls.
type Op struct {
	Name string
	// Calls is how many calls were made; Scripts how many script runs
	// Redis counted meanwhile (EVALSHA and EVAL), and Usec their time.
	Calls, Scripts int
	Usec           int64
	// Rounds are the µs per call of each round of the calls.
	Rounds []float64
	// Did is how many calls did what the operation is for: a stats call
	// saw the line, a far poll kept its place, a join got a new ticket, a
	// claim became a session, a renewal was granted, an ended session
	// could not be renewed afterwards.
	Did int
	// WaitingAfter is the line's length after the last call.
	WaitingAfter int64
}

// UsecPerCall is the Redis time of one script run, in µs: the median
// round's, so that a moment when another process held the CPU that Redis
// wanted does not count.
func (o Op) UsecPerCall() float64 {
	if len(o.Rounds) == 0 {
		return float64(o.Usec) / float64(max(o.Scripts, 1))
	}
	r := slices.Clone(o.Rounds)
	slices.Sort(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}

// Saturation is the run of many clients polling the line at once.
type Saturation struct {
	Clients, Calls, Scripts int
	// Wall is the run's wall time; RedisCPU the redis-server's user and
	// system CPU time over it (INFO cpu), and Usec its scripts' time.
	Wall, RedisCPU time.Duration
	Usec           int64
	// Did is how many polls kept their place.
	Did int
}

// PerSecond is the calls served per second of wall time, on this machine,
// with the clients sharing its cores with redis-server.
func (s Saturation) PerSecond() float64 { return float64(s.Calls) / s.Wall.Seconds() }

// PerCoreSecond is the calls one Redis core serves per second of its CPU:
// the ceiling of one core, whatever else the machine was doing.
func (s Saturation) PerCoreSecond() float64 { return float64(s.Calls) / s.RedisCPU.Seconds() }

// Busy is the share of the wall time redis-server spent on the CPU.
func (s Saturation) Busy() float64 { return s.RedisCPU.Seconds() / s.Wall.Seconds() }

// Check reports the first call that did not do what its operation is for,
// or a script run Redis did not count: figures from such a run would
// measure something else.
func (r Result) Check() error {
	for _, l := range r.Lines {
		if len(l.Ops) != len(Ops) {
			return fmt.Errorf("line of %d: %d operations measured, want %d", l.Waiting, len(l.Ops), len(Ops))
		}
		for _, o := range l.Ops {
			switch {
			case o.Scripts != o.Calls:
				return fmt.Errorf("line of %d, %s: Redis counted %d script runs for %d calls", l.Waiting, o.Name, o.Scripts, o.Calls)
			case o.Did != o.Calls:
				return fmt.Errorf("line of %d, %s: %d of %d calls did what they should", l.Waiting, o.Name, o.Did, o.Calls)
			case o.Usec <= 0:
				return fmt.Errorf("line of %d, %s: no Redis time counted", l.Waiting, o.Name)
			}
		}
		s := l.Saturation
		switch {
		case s.Scripts != s.Calls || s.Did != s.Calls:
			return fmt.Errorf("line of %d, saturation: %d calls, %d script runs counted, %d kept their place", l.Waiting, s.Calls, s.Scripts, s.Did)
		case s.Wall <= 0 || s.RedisCPU <= 0:
			return fmt.Errorf("line of %d, saturation: no time measured (wall %v, Redis CPU %v)", l.Waiting, s.Wall, s.RedisCPU)
		}
	}
	return nil
}

// Run measures cfg on a redis-server of its own.
func Run(ctx context.Context, cfg Config) (Result, error) {
	switch {
	case cfg.Calls < 1 || cfg.Calls > store.MaxCallsPerOp:
		return Result{}, fmt.Errorf("calls per operation %d: want 1 to %d", cfg.Calls, store.MaxCallsPerOp)
	case cfg.Rounds < 1 || cfg.Rounds > cfg.Calls:
		return Result{}, fmt.Errorf("%d rounds of %d calls: want 1 to %d rounds", cfg.Rounds, cfg.Calls, cfg.Calls)
	case cfg.Clients < 1 || cfg.SaturationClients < 1 || cfg.FillClients < 1 || cfg.SaturationCalls < 1:
		return Result{}, fmt.Errorf("clients and saturation calls must be at least 1")
	}
	for _, n := range cfg.Waiting {
		if n < 2 {
			return Result{}, fmt.Errorf("a line of %d: want at least 2 waiting", n)
		}
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	srv, err := redisproc.Start()
	if err != nil {
		return Result{}, err
	}
	defer srv.Close()
	rc, err := resp.Dial(srv.Addr, 10*time.Second)
	if err != nil {
		return Result{}, err
	}
	defer rc.Close()
	const token = "scriptbench"
	b := &bench{cfg: cfg, rc: rc, st: &store.Upstash{URL: "http://upstash", Token: token,
		Transport: direct{upstashdev.New(srv.Addr, token)}, Timeout: time.Minute, RandomKey: "scriptbench"}}
	info, err := b.info("server")
	if err != nil {
		return Result{}, err
	}
	res := Result{Redis: info["redis_version"], Config: cfg}
	for i, n := range cfg.Waiting {
		if _, err := rc.Do("FLUSHALL"); err != nil {
			return Result{}, err
		}
		l, err := b.line(ctx, "scriptbench-"+strconv.Itoa(i), n)
		if err != nil {
			return Result{}, fmt.Errorf("line of %d: %w", n, err)
		}
		res.Lines = append(res.Lines, l)
	}
	return res, nil
}

// bench is one run's store, Redis connection and virtual clock.
type bench struct {
	cfg   Config
	rc    *resp.Conn
	st    *store.Upstash
	t0    time.Time
	ticks atomic.Int64
}

// now is the next call's time: a step later than the last.
func (b *bench) now() time.Time { return b.t0.Add(time.Duration(b.ticks.Add(1)) * Step) }

// line fills room with n waiting tickets and measures each operation on it.
func (b *bench) line(ctx context.Context, room string, n int) (Line, error) {
	b.t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b.ticks.Store(0)
	p := Policy
	api := store.Actor{Via: "api"}
	// Paused while it fills, so nobody is called: every ticket joins at t0.
	if _, err := b.st.Operate(ctx, room, p, store.Action{Op: string(store.Pause), Actor: api}, b.t0); err != nil {
		return Line{}, err
	}
	start := time.Now()
	var filled atomic.Int64
	err := b.calls(n, b.cfg.FillClients, func(i int) error {
		if _, err := b.st.Join(ctx, room, p, "fill-"+strconv.Itoa(i), b.t0); err != nil {
			return err
		}
		if k := filled.Add(1); k%100000 == 0 {
			b.cfg.Log("%s: %d of %d joined in %v", room, k, n, time.Since(start).Round(time.Second))
		}
		return nil
	})
	if err != nil {
		return Line{}, err
	}
	l := Line{Fill: time.Since(start)}
	b.cfg.Log("%s: %d joined in %v", room, n, l.Fill.Round(time.Millisecond))
	before, err := b.st.Operate(ctx, room, p, store.Action{Op: string(store.Resume), Actor: api}, b.now())
	if err != nil {
		return Line{}, err
	}
	// Resuming may call the burst in at once.
	if before.Issued != int64(n) || before.Waiting() < int64(n-p.Burst) {
		return Line{}, fmt.Errorf("filled with %d joins, the line has %d tickets, %d waiting", n, before.Issued, before.Waiting())
	}
	l.Waiting = n
	epoch := before.Epoch
	calls := b.cfg.Calls

	// far is the k-th ticket far from the front: in the back half of the
	// line, round and round when there are fewer than the calls.
	far := func(line store.Line, k int) store.Ticket {
		mid := line.Admitted + line.Waiting()/2
		return store.Ticket{Number: mid + 1 + int64(k)%(line.Issued-mid), Epoch: epoch}
	}
	var last atomic.Pointer[store.Line]
	keep := func(line store.Line) { last.Store(&line) }
	measure := func(name string, call func(k int) (bool, error)) error {
		o := Op{Name: name, Calls: calls}
		var did atomic.Int64
		for r := range b.cfg.Rounds {
			from, to := r*calls/b.cfg.Rounds, (r+1)*calls/b.cfg.Rounds
			runs, usec, err := b.scripts(func() error {
				return b.calls(to-from, b.cfg.Clients, func(k int) error {
					ok, err := call(from + k)
					if ok {
						did.Add(1)
					}
					return err
				})
			})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			o.Scripts, o.Usec = o.Scripts+runs, o.Usec+usec
			o.Rounds = append(o.Rounds, float64(usec)/float64(max(runs, 1)))
		}
		o.Did, o.WaitingAfter = int(did.Load()), last.Load().Waiting()
		l.Ops = append(l.Ops, o)
		return nil
	}

	err = measure(OpStats, func(int) (bool, error) {
		line, err := b.st.Stats(ctx, room, p, b.now())
		keep(line)
		return err == nil && line.Epoch == epoch && line.Issued == int64(n), err
	})
	if err != nil {
		return Line{}, err
	}
	ahead := *last.Load()
	err = measure(OpPoll, func(k int) (bool, error) {
		t := far(ahead, k)
		pl, err := b.st.Poll(ctx, room, p, t, b.now())
		keep(pl.Line)
		return err == nil && pl.Outcome == store.Waiting && pl.Ticket == t.Number, err
	})
	if err != nil {
		return Line{}, err
	}
	issued := last.Load().Issued
	err = measure(OpJoin, func(k int) (bool, error) {
		pl, err := b.st.Join(ctx, room, p, "new-"+strconv.Itoa(k), b.now())
		keep(pl.Line)
		return err == nil && pl.Outcome == store.Waiting && pl.Ticket > issued, err
	})
	if err != nil {
		return Line{}, err
	}
	// The claims: an admit calls the front's tickets in, at once.
	admitted, err := b.st.Operate(ctx, room, p, store.Action{Op: store.OpAdmit, N: int64(calls), Actor: api}, b.now())
	if err != nil {
		return Line{}, err
	}
	if admitted.CalledNow != int64(calls) {
		return Line{}, fmt.Errorf("admit %d called %d", calls, admitted.CalledNow)
	}
	first := admitted.Admitted - int64(calls) + 1
	sessions := make([]store.SessionRef, calls)
	err = measure(OpClaim, func(k int) (bool, error) {
		now := b.now()
		pl, err := b.st.Poll(ctx, room, p, store.Ticket{Number: first + int64(k), Epoch: epoch}, now)
		keep(pl.Line)
		sessions[k] = store.SessionRef{ID: pl.Session, Epoch: epoch, UsableUntil: now.Add(p.Heartbeat)}
		return err == nil && pl.Outcome == store.Admitted && pl.Session != "", err
	})
	if err != nil {
		return Line{}, err
	}
	err = measure(OpRenew, func(k int) (bool, error) {
		ok, line, err := b.st.Renew(ctx, room, p, sessions[k], b.now())
		keep(line)
		return err == nil && ok, err
	})
	if err != nil {
		return Line{}, err
	}
	err = measure(OpEnd, func(k int) (bool, error) {
		line, err := b.st.End(ctx, room, p, sessions[k], b.now())
		keep(line)
		return err == nil, err
	})
	if err != nil {
		return Line{}, err
	}
	// An ended session is not renewed: the check, after the measurement.
	end := &l.Ops[len(l.Ops)-1]
	var ended atomic.Int64
	err = b.calls(calls, b.cfg.Clients, func(k int) error {
		ok, _, err := b.st.Renew(ctx, room, p, sessions[k], b.now())
		if err == nil && !ok {
			ended.Add(1)
		}
		return err
	})
	if err != nil {
		return Line{}, fmt.Errorf("renewing ended sessions: %w", err)
	}
	end.Did = min(end.Did, int(ended.Load()))

	l.Saturation, err = b.saturate(ctx, room, *last.Load(), epoch)
	if err != nil {
		return Line{}, fmt.Errorf("saturation: %w", err)
	}
	for _, o := range l.Ops {
		b.cfg.Log("%s: %s: %.1f µs of Redis CPU a call (%d calls), %d waiting after", room, o.Name, o.UsecPerCall(), o.Calls, o.WaitingAfter)
	}
	s := l.Saturation
	b.cfg.Log("%s: %d clients polling: %.0f calls/s (Redis %.0f%% busy), %.0f calls per Redis CPU second",
		room, s.Clients, s.PerSecond(), 100*s.Busy(), s.PerCoreSecond())
	return l, nil
}

// saturate has many clients poll tickets far from the front of line at
// once, and measures the calls served against wall and Redis CPU time.
func (b *bench) saturate(ctx context.Context, room string, line store.Line, epoch int64) (Saturation, error) {
	s := Saturation{Clients: b.cfg.SaturationClients, Calls: b.cfg.SaturationCalls}
	mid := line.Admitted + line.Waiting()/2
	span := line.Issued - mid
	cpu0, err := b.cpu()
	if err != nil {
		return s, err
	}
	var did atomic.Int64
	start := time.Now()
	s.Scripts, s.Usec, err = b.scripts(func() error {
		return b.calls(s.Calls, s.Clients, func(k int) error {
			// Spread over the back half: a prime stride visits every ticket.
			t := store.Ticket{Number: mid + 1 + int64(k)*7919%span, Epoch: epoch}
			pl, err := b.st.Poll(ctx, room, Policy, t, b.now())
			if err == nil && pl.Outcome == store.Waiting && pl.Ticket == t.Number {
				did.Add(1)
			}
			return err
		})
	})
	s.Wall = time.Since(start)
	if err != nil {
		return s, err
	}
	cpu1, err := b.cpu()
	if err != nil {
		return s, err
	}
	s.RedisCPU, s.Did = cpu1-cpu0, int(did.Load())
	return s, nil
}

// calls runs call(0) to call(n-1) on clients goroutines at once, and
// stops at the first error.
func (b *bench) calls(n, clients int, call func(k int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(clients, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				if err := call(k); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// scripts runs do between a reset of Redis's command statistics and a
// reading of them: the script runs (EVALSHA, and EVAL when Redis had to be
// sent the source) and their CPU time.
func (b *bench) scripts(do func() error) (runs int, usec int64, err error) {
	if _, err := b.rc.Do("CONFIG", "RESETSTAT"); err != nil {
		return 0, 0, err
	}
	if err := do(); err != nil {
		return 0, 0, err
	}
	stats, err := b.info("commandstats")
	if err != nil {
		return 0, 0, err
	}
	for _, name := range []string{"cmdstat_evalsha", "cmdstat_eval"} {
		for _, f := range strings.Split(stats[name], ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				runs += int(n)
			case "usec":
				usec += n
			}
		}
	}
	return runs, usec, nil
}

// cpu is the redis-server's user and system CPU time so far.
func (b *bench) cpu() (time.Duration, error) {
	info, err := b.info("cpu")
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
		s, err := strconv.ParseFloat(info[k], 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s %q: %w", k, info[k], err)
		}
		total += time.Duration(s * float64(time.Second))
	}
	return total, nil
}

// info is a section of INFO as its fields.
func (b *bench) info(section string) (map[string]string, error) {
	v, err := b.rc.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	if v.Kind == resp.Error {
		return nil, fmt.Errorf("INFO %s: %s", section, v.Str)
	}
	m := map[string]string{}
	for _, line := range strings.Split(v.Str, "\n") {
		if k, val, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = val
		}
	}
	return m, nil
}

// direct hands the store's requests to the REST stand-in in process,
// without a socket: the client's side of a call costs half as much, so
// more of the machine is left to redis-server.
type direct struct{ h http.Handler }

func (d direct) RoundTrip(ctx context.Context, req store.Request) (store.Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return store.Response{}, err
	}
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	d.h.ServeHTTP(w, r)
	return store.Response{Status: w.status, Body: w.body}, nil
}

// recorder is the stand-in's answer, as written.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (w *recorder) Header() http.Header         { return w.header }
func (w *recorder) WriteHeader(status int)      { w.status = status }
func (w *recorder) Write(p []byte) (int, error) { w.body = append(w.body, p...); return len(p), nil }
