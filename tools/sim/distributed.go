package sim

// Distributed bots against the door (issue 26): a botnet of many addresses
// in a few autonomous systems, keeping cookies and solving the door's proof
// of work, beside a crowd of real visitors, each request through the real
// queue.Gate with the edge's own join counter (edge.NewJoinCounter) over
// Edge Rate Limiting modelled in virtual time, the POP's snapshot (which
// the proof of work's ladder reads) and the real store script on Redis.
//
// The proof of work is priced, not hashed. A solve of b bits takes a
// geometric number of hashes of mean 2^b, drawn from the run's seeded
// random source and divided by the solver's hash rate: the solver comes
// back with its nonce that much later in virtual time, and a bot's address
// (one vCPU) solves one challenge at a time. Hashing for real is out of the
// question at this scale (a thousand bot joins a second at 20 bits is a
// hundred cores' work), and a nonce for a 20-bit challenge cannot be had
// without it, so every request that offers a nonce (visitors' and bots'
// alike, so that both are treated the same) is decided in a copy of the
// room whose proof_of_work is 1 (Distributed.cheap): its arrival passes
// ask 1 bit, whose nonce challenge.Solve finds in a couple of hashes, and
// the gate checks it as it checks any. What the real room asks is read
// from the real gate first: each newcomer's request is decided in the
// real room too (a dry run: an arrival makes no store call and changes
// nothing; Distributed.price), and its rung is the one priced; a decoy's
// way out is priced at the real room's top rung. Every other decision
// (the join limits, the penalty box, the decoy, the store's join) is the
// real gate's in the cheap room, which differs from the real one in
// proof_of_work alone, and none of those reads it but to tell a room with
// a proof of work (and a decoy line) from one without.

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
)

// A Defence is what the room sets against a botnet: the join limits per
// address (always on, at 30 a minute), per network and per autonomous
// system, the proof of work, and the decoy line.
type Defence struct {
	Name string
	// NetworkLimits turns joins_per_network_per_minute and
	// joins_per_as_per_minute on (DistributedConfig's PerNetwork and
	// PerAS).
	NetworkLimits bool
	// ProofOfWork is the room's top rung in bits; 0 asks no work.
	ProofOfWork int
	// Decoy keeps the decoy line a room with a proof of work has: without
	// it the simulated edge reports no client in the penalty box and no
	// bad bot, so nothing is decoyed (a failed solution would be, but no
	// simulated client offers one). The POP's record of arrivals joined
	// (queue.Solutions) is left out either way: no simulated client
	// replays one.
	Decoy bool
}

// Defences are the rooms compared, each adding to the one before.
var Defences = []Defence{
	{Name: "per-address limit"},
	{Name: "+ network and AS limits", NetworkLimits: true},
	{Name: "+ proof of work", NetworkLimits: true, ProofOfWork: 20},
	{Name: "+ decoy line", NetworkLimits: true, ProofOfWork: 20, Decoy: true},
}

// A Botnet is the bots beside the visitors, at full scale: Addresses
// client addresses spread evenly over ASes autonomous systems, PerNetwork
// addresses to an IPv4 /24 (a cloud range), each address trying
// PerSecond/Addresses joins a second. Every try is a new session (a fresh
// cookie jar) that keeps its cookies: it follows the arrival's redirect,
// does the work the door asks on its address's one CPU at HashRate (an
// address skips the tries that find its CPU busy), joins, and never comes
// back for its place. A 429 stops its address for the Retry-After the
// edge sends (a minute), since a bot that kept trying would keep its own
// counter over the limit; a decoy's place looks real, so the bot carries
// on, and its page (a headless browser's) does the decoy's way out on its
// own. Flagged is the share of the bots' sessions Fastly's bot detection
// reports as bad bots, at every request (decoyed in a room with a decoy
// line).
type Botnet struct {
	Name                        string
	Addresses, ASes, PerNetwork int
	PerSecond, Flagged          float64
	HashRate                    float64
}

// Scaled is b at 1/scale: whole autonomous systems sampled, each with
// all its addresses, networks and joins, so every address, network and
// AS meets its limits as at full scale and the line gets 1/scale of the
// flood.
func (b Botnet) Scaled(scale int) (Botnet, error) {
	if b.Addresses == 0 {
		return b, nil
	}
	if b.ASes%scale != 0 || b.Addresses%b.ASes != 0 {
		return b, fmt.Errorf("botnet %q: %d addresses in %d ASes do not scale to 1/%d by whole ASes", b.Name, b.Addresses, b.ASes, scale)
	}
	b.Addresses, b.ASes, b.PerSecond = b.Addresses/scale, b.ASes/scale, b.PerSecond/float64(scale)
	return b, nil
}

// The rates the door's work is priced at: a bot's is measured natively
// (make bench-bots measures it again with challenge.Solve on one core);
// a visitor's is the work page's search in Chromium on the page's thread
// with the CPU throttled 4×, a mid-range phone (BENCHMARKS.md, "The
// door's proof of work", 20 bits: 249,640 hashes a second), and a
// desktop's its worker unthrottled (1,381,785).
const (
	BotHashRate     = 9.3e6
	PhoneHashRate   = 250e3
	DesktopHashRate = 1.38e6
)

// BotLoads are the floods compared, at full scale: none, 1,000 joins a
// second from 1,000 addresses in 10 AS, and 10,000 a second from 10,000
// addresses in 100 AS: one try a second from each address, ten addresses
// to a /24 (cloud ranges; a residential proxy's spread wider, and only the
// AS limit holds them), half the sessions flagged as bad bots (an
// assumption: how many a botnet of headless browsers gets past Fastly's
// bot detection is not measured here).
var BotLoads = []Botnet{
	{Name: "no bots"},
	{Name: "1,000 joins/s, 1,000 addresses in 10 AS", Addresses: 1000, ASes: 10, PerNetwork: 10, PerSecond: 1000, Flagged: 0.5, HashRate: BotHashRate},
	{Name: "10,000 joins/s, 10,000 addresses in 100 AS", Addresses: 10000, ASes: 100, PerNetwork: 10, PerSecond: 10000, Flagged: 0.5, HashRate: BotHashRate},
}

// DistributedConfig is one run: the crowd and the room at full scale,
// played at 1/Scale (visitors, rate and the botnet's AS all divided).
type DistributedConfig struct {
	// Visitors arrive, FlashCrowd of them in the first minute and the
	// rest evenly over Spread after it; each has an address of its own,
	// in a /24 of its own, in one of VisitorASes autonomous systems drawn
	// Zipf-like (a few ISPs bring most), and solves at VisitorHashRate.
	Visitors, FlashCrowd, VisitorASes int
	Spread                            time.Duration
	VisitorHashRate                   float64
	// PerMinute is the room's admission rate (new_users_per_minute).
	PerMinute int
	// PerAddress, PerNetwork and PerAS are the room's join limits a
	// minute (the last two when the defence turns them on).
	PerAddress, PerNetwork, PerAS int
	Defence                       Defence
	Bots                          Botnet
	// Horizon is how long the event is played; visitors not admitted by
	// then are counted as not admitted.
	Horizon time.Duration
	// Scale plays the event at 1/Scale (Simulated); Seed draws the
	// visitors, and Seed+1 the bots.
	Scale int
	Seed  int64
	// Sample is how often the called tickets are read for the bots'.
	Sample time.Duration
}

// DistributedCrowd is the event of make bench-bots at full scale: 30,000
// visitors, 10,000 of them in the first minute and the rest over the
// next fifteen, in a room that admits 2,000 a minute, with 30 joins per
// address, 60 per /24 and 2,000 per AS a minute when on (2,000: the
// crowd's biggest ISP brings about that many in its busiest minute),
// played for 20 minutes at 1/10.
func DistributedCrowd(d Defence, bots Botnet) DistributedConfig {
	return DistributedConfig{
		Visitors: 30000, FlashCrowd: 10000, Spread: 15 * time.Minute, VisitorASes: 1000, VisitorHashRate: PhoneHashRate,
		PerMinute: 2000, PerAddress: 30, PerNetwork: 60, PerAS: 2000,
		Defence: d, Bots: bots, Horizon: 20 * time.Minute, Scale: 10, Seed: 1, Sample: 5 * time.Second,
	}
}

// Simulated is cfg as played: the crowd, the rate and the botnet at
// 1/Scale. The limits are per address, network and AS, whose joins the
// sampling by whole AS leaves as they are.
func (cfg DistributedConfig) Simulated() (DistributedConfig, error) {
	s := max(cfg.Scale, 1)
	var err error
	if cfg.Bots, err = cfg.Bots.Scaled(s); err != nil {
		return cfg, err
	}
	// The visitors' ASes stay as many: each brings 1/scale of its joins.
	cfg.Visitors, cfg.FlashCrowd, cfg.PerMinute = cfg.Visitors/s, cfg.FlashCrowd/s, cfg.PerMinute/s
	cfg.Scale = 1
	return cfg, nil
}

// Settings is the room's settings for cfg (as played), with proof_of_work
// at bits.
func (cfg DistributedConfig) Settings(bits int) string {
	s := fmt.Sprintf(`"new_users_per_minute":%d,"joins_per_ip_per_minute":%d`, cfg.PerMinute, cfg.PerAddress)
	if cfg.Defence.NetworkLimits {
		s += fmt.Sprintf(`,"joins_per_network_per_minute":%d,"joins_per_as_per_minute":%d`, cfg.PerNetwork, cfg.PerAS)
	}
	if bits > 0 {
		s += fmt.Sprintf(`,"proof_of_work":%d`, bits)
	}
	return s
}

// DistributedReport is what a run measured. Waits run from a visitor's
// first request to their admission, the work included; a visitor not
// admitted within the horizon waits longer than any admitted one.
type DistributedReport struct {
	Config DistributedConfig // as played
	// Scale is the run's: the event was played at 1/Scale.
	Scale int
	// Visitors were admitted Admitted, WalkedIn of them at their join.
	Visitors, Admitted, WalkedIn int
	// WaitP50 and WaitP90 are over all visitors; Censored50 and
	// Censored90 say the percentile fell on a visitor not admitted.
	WaitP50, WaitP90       time.Duration
	Censored50, Censored90 bool
	// VisitorsLimited and VisitorsDecoyed count visitors' requests
	// refused by a join limit or sent to the decoy.
	VisitorsLimited, VisitorsDecoyed int
	// VisitorCPU is the visitors' work, in seconds of their devices.
	VisitorCPU float64
	// VisitorASPeak is the most joins a visitors' AS made in a calendar
	// minute, as played.
	VisitorASPeak int
	// BotTries are the bots' sessions begun, BotTickets their joins that
	// took a ticket (BotSessions of them let in at once), BotCalled
	// their tickets called in (each an admission a visitor did not get),
	// BotLimited their joins refused (429), BotDecoyed their requests
	// sent to the decoy line, BotCPU their work in CPU-seconds.
	BotTries, BotTickets, BotSessions, BotCalled, BotLimited, BotDecoyed int
	BotCPU                                                               float64
	// Refused counts the joins refused by each scope's limit, bots' and
	// visitors'; Decoyed the requests decoyed, by why.
	Refused, Decoyed map[string]int
	// StoreCalls and BotStoreCalls are every store call and the bots'.
	StoreCalls, BotStoreCalls int
	// DecoyStoreCalls are the store calls made by requests answered
	// with the decoy: at most one each, where a real place's join or
	// poll would make one, so that a decoy takes as long.
	DecoyStoreCalls int
	Elapsed         time.Duration

	// joins are the bots' tickets, for the tests' checks of the limits;
	// solves the bots' solves.
	joins  []botJoin
	solves []botSolve
}

// BotCPUPerTicket is what a ticket cost the bots in CPU-seconds.
func (r DistributedReport) BotCPUPerTicket() float64 {
	if r.BotTickets == 0 {
		return 0
	}
	return r.BotCPU / float64(r.BotTickets)
}

// botJoin is a bot's ticket: when, and from which network and AS.
type botJoin struct {
	at      time.Time
	network string
	as      int
}

// botSolve is one solve of a bot's session: asked at, at bits, the CPU
// it took (seconds) and spent within the event, and when the session came
// back with it.
type botSolve struct {
	asked, back time.Time
	cpu, spent  float64
	bits        int
}

// address is one client address of the crowd or the botnet.
type address struct {
	addr    netip.Addr
	client  string
	network string
	as      int
	// cpuFree is when a bot address's CPU has done the solves it was
	// given; paused when its Retry-After ends.
	cpuFree, paused time.Time
}

// session is one visitor, or one bot's try.
type session struct {
	id       int
	bot      bool
	a        *address
	pass     string
	nonce    string
	arrived  time.Time // the first request
	admitted time.Time
	// decoyed says the nonce is a decoy's way out; flagged that bot
	// detection reports the session as a bad bot.
	decoyed, flagged bool
}

type dkind int

const (
	dArrive dkind = iota // a request without a pass
	dJoin                // back with the arrival (or decoy) pass and the nonce
	dPoll                // a waiting visitor's queue page
	dBotTry              // a bot address's next try
	dSample              // read the called tickets
)

type devent struct {
	at   time.Time
	seq  int
	kind dkind
	s    *session
	a    *address
}

type devents []*devent

func (e devents) Len() int { return len(e) }
func (e devents) Less(i, j int) bool {
	if !e[i].at.Equal(e[j].at) {
		return e[i].at.Before(e[j].at)
	}
	return e[i].seq < e[j].seq
}
func (e devents) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *devents) Push(x any)   { *e = append(*e, x.(*devent)) }
func (e *devents) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// Distributed is one run in progress.
type Distributed struct {
	cfg DistributedConfig
	o   *Ours
	// room is the room as the edge runs it; cheap is the copy every
	// decision is taken in (see the file's comment).
	room, cheap *queue.Room
	limits      *erlSim
	geo         geoSim
	// vrng draws the visitors, brng the bots: the visitors are drawn
	// alike with or without bots.
	vrng, brng *rand.Rand
	q          devents
	seq        int
	rep        DistributedReport
	visitors   []*session
	botTickets map[int64]bool
	asMinute   map[string]int // visitors' joins by AS and minute
}

// RunDistributed plays cfg (at full scale; Simulated is played) on the
// Redis at addr.
func RunDistributed(ctx context.Context, cfg DistributedConfig, addr string) (DistributedReport, error) {
	scale := max(cfg.Scale, 1)
	cfg, err := cfg.Simulated()
	if err != nil {
		return DistributedReport{}, err
	}
	room, err := Room(cfg.Settings(cfg.Defence.ProofOfWork))
	if err != nil {
		return DistributedReport{}, err
	}
	cheap := room
	if room.ProofOfWork > 0 {
		if cheap, err = Room(cfg.Settings(1)); err != nil {
			return DistributedReport{}, err
		}
	}
	o, err := NewOursPOPs(addr, room, 1)
	if err != nil {
		return DistributedReport{}, err
	}
	d := &Distributed{cfg: cfg, o: o, room: room, cheap: cheap, limits: newERLSim(), geo: geoSim{}, vrng: rand.New(rand.NewSource(cfg.Seed)),
		brng: rand.New(rand.NewSource(cfg.Seed + 1)), botTickets: map[int64]bool{}, asMinute: map[string]int{},
		rep: DistributedReport{Config: cfg, Scale: scale, Visitors: cfg.Visitors, Refused: map[string]int{}, Decoyed: map[string]int{}}}
	began := time.Now()
	err = d.play(ctx)
	d.rep.Elapsed = time.Since(began)
	return d.rep, err
}

func (d *Distributed) at(t time.Time, k dkind, s *session, a *address) {
	d.seq++
	heap.Push(&d.q, &devent{at: t, seq: d.seq, kind: k, s: s, a: a})
}

func (d *Distributed) play(ctx context.Context) error {
	cfg := d.cfg
	zipf := rand.NewZipf(d.vrng, 1.1, 1, uint64(max(cfg.VisitorASes-1, 0)))
	for i := 0; i < cfg.Visitors; i++ {
		var t time.Duration
		if i < cfg.FlashCrowd {
			t = time.Duration(d.vrng.Int63n(int64(time.Minute)))
		} else if rest := cfg.Visitors - cfg.FlashCrowd; rest > 0 {
			t = time.Minute + time.Duration(int64(cfg.Spread)*int64(i-cfg.FlashCrowd)/int64(rest))
		}
		// 11.0.0.0/8, a /24 each; AS 1 to VisitorASes.
		ip := netip.AddrFrom4([4]byte{11, byte(i >> 8), byte(i), 1})
		if i >= 1<<16 {
			return fmt.Errorf("%d visitors: more /24s than 11.0.0.0/8 holds", cfg.Visitors)
		}
		a := newAddress(ip, 1+int(zipf.Uint64()))
		d.geo[ip] = a.as
		s := &session{id: i, a: a}
		d.visitors = append(d.visitors, s)
		d.at(Start.Add(t), dArrive, s, a)
	}
	if err := d.botnet(); err != nil {
		return err
	}
	d.at(Start, dSample, nil, nil)
	end := Start.Add(cfg.Horizon)
	for d.q.Len() > 0 {
		e := heap.Pop(&d.q).(*devent)
		if e.at.After(end) {
			break
		}
		if err := d.handle(ctx, e); err != nil {
			return err
		}
	}
	if err := d.sample(ctx); err != nil {
		return err
	}
	d.finish()
	return nil
}

// botnet lays the bots' addresses out and schedules each address's first
// try, the tries of all spread evenly over the first second.
func (d *Distributed) botnet() error {
	b := d.cfg.Bots
	if b.Addresses == 0 || b.PerSecond <= 0 {
		return nil
	}
	perAS := b.Addresses / b.ASes
	if b.ASes > 256 || (perAS+b.PerNetwork-1)/b.PerNetwork > 256 || b.PerNetwork > 254 {
		return fmt.Errorf("botnet %q does not fit 10.0.0.0/8 as laid out", b.Name)
	}
	every := float64(time.Second) * float64(b.Addresses) / b.PerSecond
	for i := 0; i < b.Addresses; i++ {
		// 10.<AS>.<network>.<host>, in AS 64512 on (private numbers).
		as, j := i/perAS, i%perAS
		ip := netip.AddrFrom4([4]byte{10, byte(as), byte(j / b.PerNetwork), byte(1 + j%b.PerNetwork)})
		a := newAddress(ip, 64512+as)
		d.geo[ip] = a.as
		d.at(Start.Add(time.Duration(every*float64(i)/float64(b.Addresses))), dBotTry, nil, a)
	}
	return nil
}

func newAddress(ip netip.Addr, as int) *address {
	return &address{addr: ip, client: edge.ClientKey(net.IP(ip.AsSlice())), network: edge.NetworkKey(ip), as: as}
}

func (d *Distributed) handle(ctx context.Context, e *devent) error {
	switch e.kind {
	case dSample:
		d.at(e.at.Add(d.cfg.Sample), dSample, nil, nil)
		return d.sample(ctx)
	case dBotTry:
		a, b := e.a, d.cfg.Bots
		d.at(e.at.Add(time.Duration(float64(time.Second)*float64(b.Addresses)/b.PerSecond)), dBotTry, nil, a)
		if e.at.Before(a.paused) || e.at.Before(a.cpuFree) {
			// Waiting out a 429's Retry-After, or its one CPU still
			// busy with an earlier session's work: no try this time.
			return nil
		}
		d.rep.BotTries++
		s := &session{bot: true, a: a, arrived: e.at}
		// Bot detection judges the session (its requests' fingerprint)
		// alike at each request.
		s.flagged = d.cfg.Defence.Decoy && d.brng.Float64() < b.Flagged
		return d.arrive(ctx, s, e.at)
	case dArrive:
		if e.s.arrived.IsZero() {
			e.s.arrived = e.at
		}
		return d.arrive(ctx, e.s, e.at)
	case dJoin:
		return d.join(ctx, e.s, e.at)
	case dPoll:
		return d.poll(ctx, e.s, e.at)
	}
	return nil
}

// visitor is s's request at now, offering pass and nonce when set, and
// judged a bad bot when its session is flagged.
func (d *Distributed) visitor(s *session, now time.Time) queue.Visitor {
	v := queue.Visitor{Client: s.a.client, Addr: s.a.addr, Now: now}
	if s.nonce != "" {
		v.Work = []string{s.nonce}
	}
	if s.pass != "" {
		v.Passes = []string{s.pass}
	}
	if s.flagged {
		v.Hostile = func() string { return "bad bot" }
	}
	return v
}

// gate is the gate of a request at now: the room's POP, the edge's join
// counter over the virtual Limits, and the store counted in c (refusing
// every call when dry).
func (d *Distributed) gate(now time.Time, dry bool) (*queue.Gate, *calls) {
	c := &calls{st: d.o.Store, refuse: dry}
	g := &queue.Gate{Store: c, Keys: d.o.keys, Snapshots: popSnapshots{d.o.pops[0], c}}
	var j queue.JoinCounter = edge.NewJoinCounter(erlAt{d.limits, now}, d.geo)
	if !d.cfg.Defence.Decoy {
		j = noBox{j}
	}
	g.Joins = j
	return g, c
}

// decide is the gate's decision on v for s, in the cheap room, counted.
func (d *Distributed) decide(ctx context.Context, s *session, v queue.Visitor) (queue.Decision, *calls, error) {
	g, c := d.gate(v.Now, false)
	dec := g.Decide(ctx, d.cheap, v)
	if c.err != nil {
		return dec, c, c.err
	}
	d.rep.StoreCalls += c.calls
	if s.bot {
		d.rep.BotStoreCalls += c.calls
	}
	switch dec.Action {
	case queue.Decoy:
		d.rep.DecoyStoreCalls += c.calls
		d.rep.Decoyed[dec.Why]++
		if s.bot {
			d.rep.BotDecoyed++
		} else {
			d.rep.VisitorsDecoyed++
		}
	case queue.Limited:
		d.rep.Refused[dec.Why]++
	case queue.Busy, queue.Closed:
		return dec, c, fmt.Errorf("the gate answered %s (%s): %v", dec.Action, dec.Why, dec.Err)
	}
	return dec, c, nil
}

// price is the bits the real room asks of a newcomer v: the real gate's
// decision on the same request (an arrival: no store call, nothing
// written), which must be the cheap room's in kind.
func (d *Distributed) price(ctx context.Context, v queue.Visitor, cheap queue.Decision) (int, error) {
	if d.room == d.cheap {
		return cheap.Challenge.Bits, nil
	}
	g, c := d.gate(v.Now, true)
	v.Passes, v.Work = nil, nil
	real := g.Decide(ctx, d.room, v)
	if c.calls != 0 || real.Action != cheap.Action {
		return 0, fmt.Errorf("the real room answered a newcomer %s (%s) with %d store calls, the cheap one %s (%s)",
			real.Action, real.Why, c.calls, cheap.Action, cheap.Why)
	}
	return real.Challenge.Bits, nil
}

// arrive is s's request without a pass.
func (d *Distributed) arrive(ctx context.Context, s *session, now time.Time) error {
	s.pass, s.nonce, s.decoyed = "", "", false
	v := d.visitor(s, now)
	dec, _, err := d.decide(ctx, s, v)
	if err != nil {
		return err
	}
	return d.newcomer(ctx, s, v, dec, now)
}

// newcomer follows a decision that gave s a new arrival or decoy pass: it
// comes back at once, or once it has done the work asked.
func (d *Distributed) newcomer(ctx context.Context, s *session, v queue.Visitor, dec queue.Decision, now time.Time) error {
	s.pass, s.nonce, s.decoyed = dec.Pass, "", false
	switch dec.Action {
	case queue.Arrive:
		d.at(now, dJoin, s, nil)
		return nil
	case queue.Work:
		bits, err := d.price(ctx, v, dec)
		if err != nil {
			return err
		}
		d.work(s, dec.Challenge, bits, now)
		return nil
	case queue.Decoy:
		// The decoy's page does its way out: the room's top rung.
		s.decoyed = true
		d.work(s, dec.Challenge, d.room.ProofOfWork, now)
		return nil
	}
	return fmt.Errorf("a newcomer was answered %s (%s): %v", dec.Action, dec.Why, dec.Err)
}

// work has s solve c, priced at bits, and come back with its nonce: a
// visitor on their own device, a bot on its address's CPU once it is free.
func (d *Distributed) work(s *session, c challenge.Challenge, bits int, now time.Time) {
	rate, rng := d.cfg.VisitorHashRate, d.vrng
	if s.bot {
		rate, rng = d.cfg.Bots.HashRate, d.brng
	}
	cpu := hashes(rng, bits) / rate
	s.nonce, _ = c.Solve()
	start := now
	if s.bot {
		start = maxTime(now, s.a.cpuFree)
	}
	back := start.Add(time.Duration(cpu * float64(time.Second)))
	// What is spent within the event: a search the event's end cuts
	// short counts up to it.
	spent := max(minTime(back, Start.Add(d.cfg.Horizon)).Sub(start), 0).Seconds()
	if !s.bot {
		d.rep.VisitorCPU += spent
		d.at(back, dJoin, s, nil)
		return
	}
	d.rep.BotCPU += spent
	s.a.cpuFree = back
	d.rep.solves = append(d.rep.solves, botSolve{asked: now, back: back, cpu: cpu, spent: spent, bits: bits})
	d.at(back, dJoin, s, nil)
}

// hashes draws how many hashes a search for bits zero bits takes: the
// first success of trials that each succeed with probability 2^-bits.
func hashes(rng *rand.Rand, bits int) float64 {
	if bits <= 0 {
		return 0
	}
	p := math.Ldexp(1, -bits)
	u := 1 - rng.Float64() // (0, 1]
	return math.Max(1, math.Ceil(math.Log(u)/math.Log1p(-p)))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// join is s back with its pass and nonce.
func (d *Distributed) join(ctx context.Context, s *session, now time.Time) error {
	v := d.visitor(s, now)
	dec, c, err := d.decide(ctx, s, v)
	if err != nil {
		return err
	}
	switch dec.Action {
	case queue.Wait, queue.Admit:
		if !c.asked {
			return fmt.Errorf("a join was answered %s (%s) without the store", dec.Action, dec.Why)
		}
		if s.bot {
			d.botJoined(s, c.place.Ticket, dec.Action == queue.Admit, now)
			return nil
		}
		d.visitorJoined(s, now)
		return d.placed(s, dec, now, true)
	case queue.Limited:
		if s.bot {
			d.rep.BotLimited++
			s.a.paused = now.Add(time.Minute) // the 429's Retry-After
			return nil
		}
		d.rep.VisitorsLimited++
		// The page says to wait a minute and try again.
		d.at(now.Add(time.Minute), dArrive, s, s.a)
		return nil
	case queue.Decoy, queue.Arrive, queue.Work:
		return d.newcomer(ctx, s, v, dec, now)
	}
	return fmt.Errorf("a join was answered %s (%s): %v", dec.Action, dec.Why, dec.Err)
}

// placed follows a visitor's ticket: admitted, or polling again.
func (d *Distributed) placed(s *session, dec queue.Decision, now time.Time, joined bool) error {
	if dec.Pass != "" {
		s.pass = dec.Pass
	}
	s.nonce = ""
	if dec.Action == queue.Admit {
		s.admitted = now
		d.rep.Admitted++
		if joined {
			d.rep.WalkedIn++
		}
		return nil
	}
	d.at(now.Add(dec.Place.PollEvery), dPoll, s, nil)
	return nil
}

// poll is a waiting visitor's queue page asking again.
func (d *Distributed) poll(ctx context.Context, s *session, now time.Time) error {
	v := d.visitor(s, now)
	dec, _, err := d.decide(ctx, s, v)
	if err != nil {
		return err
	}
	switch dec.Action {
	case queue.Wait, queue.Admit:
		return d.placed(s, dec, now, false)
	case queue.Arrive, queue.Work, queue.Decoy:
		// The place was lost: a newcomer again.
		return d.newcomer(ctx, s, v, dec, now)
	}
	return fmt.Errorf("visitor %d's poll was answered %s (%s): %v", s.id, dec.Action, dec.Why, dec.Err)
}

func (d *Distributed) visitorJoined(s *session, now time.Time) {
	k := strconv.Itoa(s.a.as) + "@" + strconv.FormatInt(now.Unix()/60, 10)
	d.asMinute[k]++
	d.rep.VisitorASPeak = max(d.rep.VisitorASPeak, d.asMinute[k])
}

// botJoined records a bot's ticket; the bot never comes back for it.
func (d *Distributed) botJoined(s *session, ticket int64, admitted bool, now time.Time) {
	d.rep.BotTickets++
	d.rep.joins = append(d.rep.joins, botJoin{at: now, network: s.a.network, as: s.a.as})
	if admitted {
		d.rep.BotSessions++
		return
	}
	d.botTickets[ticket] = true
}

// sample counts the bots' tickets among those called and not claimed: read
// more often than the claim window, it misses none.
func (d *Distributed) sample(ctx context.Context) error {
	if len(d.botTickets) == 0 {
		return nil
	}
	called, err := d.o.CalledTickets(ctx)
	for _, t := range called {
		if d.botTickets[t] {
			delete(d.botTickets, t)
			d.rep.BotCalled++
		}
	}
	return err
}

// finish takes the waits' percentiles over every visitor, those not
// admitted counted as waiting longer than anyone.
func (d *Distributed) finish() {
	waits := make([]time.Duration, 0, len(d.visitors))
	for _, s := range d.visitors {
		if s.admitted.IsZero() {
			waits = append(waits, time.Duration(math.MaxInt64))
			continue
		}
		waits = append(waits, s.admitted.Sub(s.arrived))
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	d.rep.WaitP50, d.rep.WaitP90 = percentile(waits, 50), percentile(waits, 90)
	d.rep.Censored50, d.rep.Censored90 = d.rep.WaitP50 == math.MaxInt64, d.rep.WaitP90 == math.MaxInt64
}

// erlSim is Fastly's Edge Rate Limiting in virtual time, as one POP keeps
// it: each counter's events of the last minute, exactly (the platform may
// undercount by up to 10%), and penalty boxes with their end.
type erlSim struct {
	events map[string][]time.Time
	boxes  map[string]time.Time
}

func newERLSim() *erlSim {
	return &erlSim{events: map[string][]time.Time{}, boxes: map[string]time.Time{}}
}

// erlAt is erlSim as a request at now sees it: edge.Limits.
type erlAt struct {
	l   *erlSim
	now time.Time
}

// recent drops key's events older than a minute and returns the rest.
// Requests are played in time order, so the oldest are first.
func (e erlAt) recent(key string) []time.Time {
	ev := e.l.events[key]
	i := 0
	for i < len(ev) && e.now.Sub(ev[i]) >= time.Minute {
		i++
	}
	switch {
	case i == len(ev) && i > 0:
		delete(e.l.events, key)
		return nil
	case i > 0:
		// Resliced: append copies the rest away when it grows.
		ev = ev[i:]
		e.l.events[key] = ev
	}
	return ev
}

func (e erlAt) Count(counter, client string) (int, error) {
	k := counter + "|" + client
	ev := append(e.recent(k), e.now)
	e.l.events[k] = ev
	return len(ev), nil
}

func (e erlAt) Counted(counter, client string) (int, error) {
	return len(e.recent(counter + "|" + client)), nil
}

func (e erlAt) Penalize(box, client string, d time.Duration) error {
	// The platform's granularity: whole minutes, one to sixty.
	d = min(max(d.Truncate(time.Minute), time.Minute), time.Hour)
	e.l.boxes[box+"|"+client] = e.now.Add(d)
	return nil
}

func (e erlAt) Penalized(box, client string) (bool, error) {
	return e.now.Before(e.l.boxes[box+"|"+client]), nil
}

// geoSim is Fastly's geolocation as the run lays its addresses out: each
// address's autonomous system.
type geoSim map[netip.Addr]int

func (g geoSim) Country(netip.Addr) (string, error) { return "", nil }
func (g geoSim) AS(ip netip.Addr) (int, error)      { return g[ip], nil }

// noBox is a join counter that reports nobody in the penalty box: the
// room without its decoy line.
type noBox struct{ queue.JoinCounter }

func (noBox) Penalized(*queue.Room, queue.Visitor) (bool, error) { return false, nil }
