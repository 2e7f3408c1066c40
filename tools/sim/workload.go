package sim

import (
	"fmt"
	"time"

	"github.com/edgequeue/waitingroom/heartbeat"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/resp"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// The timings every simulated design shares: the queue page refreshes
// every Refresh, and a session ends after Inactivity without a request.
const (
	Refresh    = 10 * time.Second
	Inactivity = time.Minute
)

// Timings are the room settings every simulated room shares: Refresh and
// Inactivity, 20 s for a called visitor to come, and 5 minutes for a
// waiting place without a poll.
var Timings = timings(Inactivity)

// timings is Timings with another inactivity timeout.
func timings(inactivity time.Duration) string {
	return fmt.Sprintf(`"paths":["/"],"refresh":%d,"claim_window":20,"inactivity_timeout":%d,"queue_timeout":300`,
		int(Refresh.Seconds()), int(inactivity.Seconds()))
}

// Crowd is the benchmark's event: flash of the visitors arrive in the first
// minute, the rest evenly over the next spread; 15% never come back after a
// first request that does not let them in, and 15% give up while waiting;
// those admitted stay one to four minutes, making a request every 15 s, and
// half of them say goodbye with a beacon while the other half just go idle.
func Crowd(visitors, flash, capacity int, spread time.Duration) Config {
	return Config{
		Visitors: visitors, FlashCrowd: flash, Spread: spread, Capacity: capacity, Refresh: Refresh,
		StayMin: time.Minute, StayMax: 4 * time.Minute, Activity: 15 * time.Second,
		NoShowJoin: 0.15, NoShowWait: 0.15, Sample: 5 * time.Second, Seed: 1,
		Batch: 50 * time.Millisecond, Concurrency: 16,
	}
}

// Room parses a simulated room, "sim", from the settings given and Timings.
func Room(settings string) (*queue.Room, error) {
	return queue.ParseRoom("sim", []byte(fmt.Sprintf("{%s,%s}", settings, Timings)))
}

// NewOurs is the waiting room's own policy for room on the Redis at addr,
// through the production store client and the Upstash REST stand-in (in
// process, without a socket), as today's edge runs it: without snapshots.
func NewOurs(addr string, room *queue.Room) (*Ours, error) {
	return NewOursPOPs(addr, room, 0)
}

// NewOursPOPs is NewOurs with the visitors spread over pops POPs (visitor
// i in POP i mod pops), each with its own snapshot of the line.
func NewOursPOPs(addr string, room *queue.Room, pops int) (*Ours, error) {
	return newOurs(newStore(addr), resp.NewPool(addr, 2), room, pops)
}

// newStore is the production store client for the Redis at addr.
func newStore(addr string) *store.Upstash {
	const token = "sim-token"
	return &store.Upstash{URL: "http://upstash.local", Token: token, RandomKey: "sim", Timeout: 5 * time.Second,
		Transport: native.InProcess{Handler: upstashdev.New(addr, token)}}
}

// Models are the two other designs, set up for the same capacity as a
// capacity room: the two-counter queue advances its cursor every 10 s by
// what the capacity serves in that time at the mean stay (the rate an
// operator would set), the unordered gate counts sessions like the room.
func Models(addrTwoCounter, addrGate string, cfg Config) (*TwoCounter, *UnorderedGate) {
	const period = 10 * time.Second
	meanStay := (cfg.StayMin + cfg.StayMax) / 2
	return &TwoCounter{Redis: resp.NewPool(addrTwoCounter, cfg.Concurrency+2), Period: period,
			Quantity: max(1, int(int64(cfg.Capacity)*int64(period)/int64(meanStay))),
			Refresh:  cfg.Refresh, Reservation: 24 * time.Hour},
		&UnorderedGate{Redis: resp.NewPool(addrGate, cfg.Concurrency+2), Capacity: cfg.Capacity,
			Inactivity: Inactivity, Refresh: cfg.Refresh}
}

// POPCounts are the numbers of POPs the snapshot of the line is measured
// over: one, a region's worth, and a global network's.
var POPCounts = []int{1, 10, 50}

// FloodCrowd is the event bot floods are measured on (issue 10): 600
// visitors, 300 of them in the first minute and the rest over the next ten,
// with places for 100 at once (FloodRoom). The store is called one request
// at a time, in event order, so two runs with the same seed differ only by
// what the bots did.
func FloodCrowd() Config {
	cfg := Crowd(600, 300, 100, 10*time.Minute)
	cfg.Concurrency = 1
	return cfg
}

// FloodRoom is FloodCrowd's room settings.
const FloodRoom = `"max_active_users":100`

// FloodHorizon is how long the floods last, and when the visitors admitted
// so far are counted.
const FloodHorizon = 20 * time.Minute

// FloodScenario is one bot flood beside FloodCrowd.
type FloodScenario struct {
	Name string
	Bots BotFlood
}

// FloodScenarios are the floods measured: none, 20 and 200 bots a second
// that never send a second request, and 200 a second from ten addresses
// that keep the arrival pass and come back once, which the per-address
// limit holds back.
var FloodScenarios = []FloodScenario{
	{"no bots", BotFlood{}},
	{"20 bot joins/s, no cookies", BotFlood{PerSecond: 20, For: FloodHorizon}},
	{"200 bot joins/s, no cookies", BotFlood{PerSecond: 200, For: FloodHorizon}},
	{"200 bot joins/s from 10 addresses, keeping cookies", BotFlood{PerSecond: 200, For: FloodHorizon, IPs: 10, KeepCookies: true}},
}

// Flood is FloodCrowd with the scenario's bots, met by edge.
func (s FloodScenario) Flood(edge Edge) Config {
	cfg := FloodCrowd()
	cfg.Bots, cfg.Edge = s.Bots, edge
	return cfg
}

// HeartbeatScenario is a room's inactivity timeout, with or without the
// heartbeat script on the pages of its origin.
type HeartbeatScenario struct {
	Name       string
	Inactivity time.Duration
	Heartbeat  bool
}

// HeartbeatScenarios are the rooms the heartbeat is measured in: today's
// timings (a minute, no heartbeat), and two short timeouts kept by pages
// that ping: 30 s, and the shortest a room accepts, 10 s, which is shorter
// than the 15 s between an admitted visitor's requests.
var HeartbeatScenarios = []HeartbeatScenario{
	{"no heartbeat, inactivity 60 s (today)", Inactivity, false},
	{"heartbeat, inactivity 30 s", 30 * time.Second, true},
	{"heartbeat, inactivity 10 s", 10 * time.Second, true},
}

// Room is the scenario's room: settings, then Timings with its inactivity
// timeout.
func (s HeartbeatScenario) Room(settings string) (*queue.Room, error) {
	return queue.ParseRoom("sim", []byte(fmt.Sprintf("{%s,%s}", settings, timings(s.Inactivity))))
}

// Config is cfg with the pages pinging as the script does in room, when
// the scenario has the heartbeat.
func (s HeartbeatScenario) Config(cfg Config, room *queue.Room) Config {
	if s.Heartbeat {
		cfg.Heartbeat = time.Duration(heartbeat.Every(room.Heartbeat())) * time.Second
	}
	return cfg
}
