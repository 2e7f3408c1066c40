// Package scriptbench measures what one call of the store's script
// (store/line.lua) costs Redis, for each operation on one room whose line
// holds a given number of waiting tickets: the CPU time of Redis's main
// thread per call (INFO cpu) and the time Redis clocks around the script
// (INFO commandstats' usec_per_call of EVALSHA); and the calls one Redis
// core serves when 32 clients poll that room at once.
//
// It drives the script only through package store's public API, on its
// own redis-server (tools/redisproc) behind the REST stand-in
// (tools/upstashdev), so the same code measures the script of another
// commit: make bench-script builds it once against this tree and once
// against the baseline's root module (a go.mod replace), and runs the two
// side by side, their passes taking turns (Serve, Proc). That is why it
// imports nothing else of the repository.
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
	// Calls is how many calls each operation is measured over in a pass
	// (at most store.MaxCallsPerOp: the claims are called in by one
	// admit), in Rounds rounds of as many calls each, each counted on its
	// own; each line is measured in Passes passes, one after the other.
	Calls, Rounds, Passes int
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
var Default = Config{Waiting: []int{1000, 100000, 1000000}, Calls: 2000, Rounds: 10, Passes: 3, Clients: 4,
	SaturationClients: 32, SaturationCalls: 10000, FillClients: 64}

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

// Policy is the room's policy: first come, first served, 600 called a
// minute, up to 100,000 active, and the settings' defaults otherwise. The
// rate calls a ticket every 100 ms of virtual time, about one call in a
// thousand, so the calling code runs as it does in a live room; the
// capacity never binds.
var Policy = store.Policy{Mode: store.Fifo, PerMinute: 600, Burst: 1, Capacity: 100000,
	ClaimWindow: 30 * time.Second, SessionTTL: 90 * time.Second, QueueTimeout: 15 * time.Minute,
	CatchUp: 10 * time.Second, Heartbeat: 30 * time.Second, PriorityShare: 0.2}

// PolicyText describes Policy for the report.
const PolicyText = "first come, first served; 600 called a minute (burst 1); capacity 100,000 (never reached); " +
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

// Add adds a pass's measurements of the same line to l's.
func (l *Line) Add(pass Line) {
	if len(l.Ops) == 0 {
		*l = pass
		l.Ops = slices.Clone(pass.Ops)
		return
	}
	for i := range min(len(l.Ops), len(pass.Ops)) {
		o, p := &l.Ops[i], pass.Ops[i]
		o.Calls, o.Scripts, o.Usec, o.CPU, o.Did = o.Calls+p.Calls, o.Scripts+p.Scripts, o.Usec+p.Usec, o.CPU+p.CPU, o.Did+p.Did
		o.Rounds, o.CPURounds = append(o.Rounds, p.Rounds...), append(o.CPURounds, p.CPURounds...)
		o.WaitingAfter = p.WaitingAfter
	}
	s, p := &l.Saturation, pass.Saturation
	s.Calls, s.Scripts, s.Usec, s.Did = s.Calls+p.Calls, s.Scripts+p.Scripts, s.Usec+p.Usec, s.Did+p.Did
	s.Wall, s.RedisCPU = s.Wall+p.Wall, s.RedisCPU+p.RedisCPU
}

// Op is one operation measured over Calls calls.
type Op struct {
	Name string
	// Calls is how many calls were made; Scripts how many script runs
	// Redis counted meanwhile (EVALSHA and EVAL), Usec their time as
	// Redis clocks it (INFO commandstats), and CPU the CPU time of
	// Redis's main thread meanwhile (INFO cpu).
	Calls, Scripts int
	Usec           int64
	CPU            time.Duration
	// Rounds are the µs per call of each round of the calls, by
	// commandstats; CPURounds by CPU time.
	Rounds, CPURounds []float64
	// Did is how many calls did what the operation is for: a stats call
	// saw the line, a far poll kept its place, a join got a new ticket, a
	// claim became a session, a renewal was granted, an ended session
	// could not be renewed afterwards.
	Did int
	// WaitingAfter is the line's length after the last call.
	WaitingAfter int64
}

// UsecPerCall is the Redis time of one script run, in µs, as INFO
// commandstats counts it (usec_per_call): the median round's, so that a
// moment when another process held the CPU that Redis wanted counts less.
// Redis clocks a command by the wall clock, so on a busy machine this
// includes waits for a CPU.
func (o Op) UsecPerCall() float64 {
	if len(o.Rounds) == 0 {
		return float64(o.Usec) / float64(max(o.Scripts, 1))
	}
	return median(o.Rounds)
}

// CPUPerCall is the CPU time of Redis's main thread per call, in µs: the
// median round's. It counts the whole call (reading the request, the
// script, writing the answer), and no wait for a CPU.
func (o Op) CPUPerCall() float64 {
	if len(o.CPURounds) == 0 {
		return float64(o.CPU.Microseconds()) / float64(max(o.Calls, 1))
	}
	return median(o.CPURounds)
}

// PairedRatio compares two runs' rounds that ran next to each other,
// a[i] beside b[i]: the median of a[i] ÷ b[i], so that what else the
// machine did at the time weighs on both sides of each ratio alike. It
// reports false when the rounds do not pair.
func PairedRatio(a, b []float64) (float64, bool) {
	if len(a) != len(b) || len(a) == 0 || slices.Contains(b, 0) {
		return 0, false
	}
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	return median(r), true
}

func median(v []float64) float64 {
	r := slices.Clone(v)
	slices.Sort(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}

// Saturation is the run of many clients polling the line at once.
type Saturation struct {
	Clients, Calls, Scripts int
	// Wall is the run's wall time; RedisCPU the user and system CPU time
	// of redis-server's main thread over it (INFO cpu), and Usec its
	// scripts' time by commandstats.
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
			case o.Usec <= 0 || o.CPU <= 0:
				return fmt.Errorf("line of %d, %s: no Redis time counted (%d µs, CPU %v)", l.Waiting, o.Name, o.Usec, o.CPU)
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

// Run measures cfg on a redis-server of its own: each line length in
// turn, in cfg.Passes passes.
func Run(ctx context.Context, cfg Config) (Result, error) {
	b, err := Start(cfg)
	if err != nil {
		return Result{}, err
	}
	defer b.Close()
	res := Result{Redis: b.Redis, Config: cfg}
	for _, n := range cfg.Waiting {
		if err := b.Fill(ctx, n); err != nil {
			return Result{}, err
		}
		var l Line
		for range cfg.Passes {
			pass, err := b.Pass(ctx)
			if err != nil {
				return Result{}, err
			}
			l.Add(pass)
		}
		res.Lines = append(res.Lines, l)
	}
	return res, nil
}

// Bench is a redis-server of its own with one room's line in it, which
// Fill fills and Pass measures.
type Bench struct {
	// Redis is the server's version, RedisPID its process.
	Redis    string
	RedisPID int
	cfg      Config
	srv      *redisproc.Server
	rc       *resp.Conn
	st       *store.Upstash
	// The line: its room, length, epoch, fill time and passes so far.
	room   string
	n      int
	epoch  int64
	fill   time.Duration
	passes int
	t0     time.Time
	ticks  atomic.Int64
	// turn, when set, is called before each round a pass measures, and
	// returns when the round may run (Serve).
	turn func()
}

// Start checks cfg (but its Waiting) and starts a redis-server.
func Start(cfg Config) (*Bench, error) {
	switch {
	case cfg.Calls < 1 || cfg.Calls > store.MaxCallsPerOp:
		return nil, fmt.Errorf("calls per operation %d: want 1 to %d", cfg.Calls, store.MaxCallsPerOp)
	case cfg.Rounds < 1 || cfg.Rounds > cfg.Calls:
		return nil, fmt.Errorf("%d rounds of %d calls: want 1 to %d rounds", cfg.Rounds, cfg.Calls, cfg.Calls)
	case cfg.Passes < 1 || cfg.Clients < 1 || cfg.SaturationClients < 1 || cfg.FillClients < 1 || cfg.SaturationCalls < 1:
		return nil, fmt.Errorf("passes, clients and saturation calls must be at least 1")
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	srv, err := redisproc.Start()
	if err != nil {
		return nil, err
	}
	rc, err := resp.Dial(srv.Addr, 10*time.Second)
	if err != nil {
		srv.Close()
		return nil, err
	}
	const token = "scriptbench"
	b := &Bench{cfg: cfg, srv: srv, rc: rc, st: &store.Upstash{URL: "http://upstash", Token: token,
		Transport: direct{upstashdev.New(srv.Addr, token)}, Timeout: time.Minute, RandomKey: "scriptbench"}}
	info, err := b.info("server")
	if err != nil {
		b.Close()
		return nil, err
	}
	b.Redis = info["redis_version"]
	b.RedisPID, _ = strconv.Atoi(info["process_id"])
	return b, nil
}

// Close stops the redis-server.
func (b *Bench) Close() {
	b.rc.Close()
	b.srv.Close()
}

// now is the next call's time: a step later than the last.
func (b *Bench) now() time.Time { return b.t0.Add(time.Duration(b.ticks.Add(1)) * Step) }

// Fill empties Redis and fills a new room's line with n waiting tickets,
// all joined at one instant, the room paused so none is called; then it
// resumes the room.
func (b *Bench) Fill(ctx context.Context, n int) error {
	if n < 2 {
		return fmt.Errorf("a line of %d: want at least 2 waiting", n)
	}
	if _, err := b.rc.Do("FLUSHALL"); err != nil {
		return err
	}
	b.room, b.n, b.passes = "scriptbench-"+strconv.Itoa(n), n, 0
	b.t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b.ticks.Store(0)
	room := b.room
	p := Policy
	api := store.Actor{Via: "api"}
	// Paused while it fills, so nobody is called: every ticket joins at t0.
	if _, err := b.st.Operate(ctx, room, p, store.Action{Op: string(store.Pause), Actor: api}, b.t0); err != nil {
		return err
	}
	start := time.Now()
	var filled atomic.Int64
	err := b.calls(n, b.cfg.FillClients, func(i int) error {
		if _, err := b.st.Join(ctx, room, p, store.Arrival{ID: "fill-" + strconv.Itoa(i)}, b.t0); err != nil {
			return err
		}
		if k := filled.Add(1); k%100000 == 0 {
			b.cfg.Log("%s: %d of %d joined in %v", room, k, n, time.Since(start).Round(time.Second))
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.fill = time.Since(start)
	b.cfg.Log("%s: %d joined in %v", room, n, b.fill.Round(time.Millisecond))
	line, err := b.st.Operate(ctx, room, p, store.Action{Op: string(store.Resume), Actor: api}, b.now())
	if err != nil {
		return err
	}
	// Resuming may call the burst in at once.
	if line.Issued != int64(n) || line.Waiting() < int64(n-p.Burst) {
		return fmt.Errorf("filled with %d joins, the line has %d tickets, %d waiting", n, line.Issued, line.Waiting())
	}
	b.epoch = line.Epoch
	return nil
}

// Pass measures each operation, then the saturation run, on the line
// Fill filled. Passes can follow one another: each leaves the line as
// long as it found it, less the few the rate called.
func (b *Bench) Pass(ctx context.Context) (Line, error) {
	if b.room == "" {
		return Line{}, fmt.Errorf("no line to measure: Fill first")
	}
	b.passes++
	room, epoch, calls, p := b.room, b.epoch, b.cfg.Calls, Policy
	api := store.Actor{Via: "api"}
	l := Line{Waiting: b.n, Fill: b.fill}
	start, err := b.st.Stats(ctx, room, p, b.now())
	if err != nil {
		return Line{}, err
	}

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
			b.wait()
			t, err := b.scripts(func() error {
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
			o.Scripts, o.Usec, o.CPU = o.Scripts+t.runs, o.Usec+t.usec, o.CPU+t.cpu
			o.Rounds = append(o.Rounds, float64(t.usec)/float64(max(t.runs, 1)))
			o.CPURounds = append(o.CPURounds, float64(t.cpu.Microseconds())/float64(to-from))
		}
		o.Did, o.WaitingAfter = int(did.Load()), last.Load().Waiting()
		l.Ops = append(l.Ops, o)
		return nil
	}

	err = measure(OpStats, func(int) (bool, error) {
		line, err := b.st.Stats(ctx, room, p, b.now())
		keep(line)
		return err == nil && line.Epoch == epoch && line.Issued == start.Issued, err
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
		pl, err := b.st.Join(ctx, room, p, store.Arrival{ID: fmt.Sprintf("new-%d-%d", b.passes, k)}, b.now())
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
		b.cfg.Log("%s: %s: %.1f µs a call by commandstats, %.1f µs of CPU (%d calls), %d waiting after", room, o.Name, o.UsecPerCall(), o.CPUPerCall(), o.Calls, o.WaitingAfter)
	}
	s := l.Saturation
	b.cfg.Log("%s: %d clients polling: %.0f calls/s (Redis %.0f%% busy), %.0f calls per Redis CPU second",
		room, s.Clients, s.PerSecond(), 100*s.Busy(), s.PerCoreSecond())
	return l, nil
}

// saturate has many clients poll tickets far from the front of line at
// once, and measures the calls served against wall and Redis CPU time.
func (b *Bench) saturate(ctx context.Context, room string, line store.Line, epoch int64) (Saturation, error) {
	s := Saturation{Clients: b.cfg.SaturationClients, Calls: b.cfg.SaturationCalls}
	mid := line.Admitted + line.Waiting()/2
	span := line.Issued - mid
	var did atomic.Int64
	for r := range b.cfg.Rounds {
		from, to := r*s.Calls/b.cfg.Rounds, (r+1)*s.Calls/b.cfg.Rounds
		b.wait()
		t, err := b.scripts(func() error {
			return b.calls(to-from, s.Clients, func(k int) error {
				// Spread over the back half: a prime stride visits every ticket.
				t := store.Ticket{Number: mid + 1 + int64(from+k)*7919%span, Epoch: epoch}
				pl, err := b.st.Poll(ctx, room, Policy, t, b.now())
				if err == nil && pl.Outcome == store.Waiting && pl.Ticket == t.Number {
					did.Add(1)
				}
				return err
			})
		})
		if err != nil {
			return s, err
		}
		s.Scripts, s.Usec, s.RedisCPU, s.Wall = s.Scripts+t.runs, s.Usec+t.usec, s.RedisCPU+t.cpu, s.Wall+t.wall
	}
	s.Did = int(did.Load())
	return s, nil
}

// wait returns when the next round may run.
func (b *Bench) wait() {
	if b.turn != nil {
		b.turn()
	}
}

// calls runs call(0) to call(n-1) on clients goroutines at once, and
// stops at the first error.
func (b *Bench) calls(n, clients int, call func(k int) error) error {
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

// tally is what Redis counted over some calls: the script runs (EVALSHA,
// and EVAL when Redis had to be sent the source), their time by
// commandstats, and the main thread's CPU time; and the calls' wall time.
type tally struct {
	runs      int
	usec      int64
	cpu, wall time.Duration
}

// scripts runs do between a reset of Redis's command statistics and a
// reading of them, and between two readings of its CPU time.
func (b *Bench) scripts(do func() error) (t tally, err error) {
	if _, err := b.rc.Do("CONFIG", "RESETSTAT"); err != nil {
		return t, err
	}
	cpu0, err := b.cpu()
	if err != nil {
		return t, err
	}
	start := time.Now()
	if err := do(); err != nil {
		return t, err
	}
	t.wall = time.Since(start)
	cpu1, err := b.cpu()
	if err != nil {
		return t, err
	}
	t.cpu = cpu1 - cpu0
	stats, err := b.info("commandstats")
	if err != nil {
		return t, err
	}
	for _, name := range []string{"cmdstat_evalsha", "cmdstat_eval"} {
		for _, f := range strings.Split(stats[name], ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				t.runs += int(n)
			case "usec":
				t.usec += n
			}
		}
	}
	return t, nil
}

// cpu is the user and system CPU time of redis-server's main thread so
// far, the thread that runs every command (Redis 7's INFO cpu), or of the
// whole process where Redis does not say.
func (b *Bench) cpu() (time.Duration, error) {
	info, err := b.info("cpu")
	if err != nil {
		return 0, err
	}
	keys := []string{"used_cpu_user_main_thread", "used_cpu_sys_main_thread"}
	if _, ok := info[keys[0]]; !ok {
		keys = []string{"used_cpu_user", "used_cpu_sys"}
	}
	var total time.Duration
	for _, k := range keys {
		s, err := strconv.ParseFloat(info[k], 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s %q: %w", k, info[k], err)
		}
		total += time.Duration(s * float64(time.Second))
	}
	return total, nil
}

// info is a section of INFO as its fields.
func (b *Bench) info(section string) (map[string]string, error) {
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
