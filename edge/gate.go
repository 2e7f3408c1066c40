// The store call, the fourth stage: the gate over the store, built from
// the secrets and the settings (or the setup problem that keeps it away),
// and what the POP keeps beside the store so that most requests need no
// call: its snapshots of the lines, its down marker, and the join
// counters of Edge Rate Limiting.

package edge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The examples the backend fixes show in place of the real host name.
const (
	originExample  = "<your site's host name>"
	upstashExample = "<your database>.upstash.io"
)

// unresolvable reports whether a store error came from a DNS failure of the
// upstash backend.
func unresolvable(err error) bool { return errors.Is(err, ErrBackendUnresolvable) }

// describe says what a setup error asks for, or passes another error on.
func describe(err error) string {
	var setup *SetupError
	if errors.As(err, &setup) {
		return "setup: " + setup.Error()
	}
	return err.Error()
}

// gate builds the line's machinery from the secrets and the request's settings.
func (q *request) gate() (*queue.Gate, error) {
	keys, err := q.keys()
	if err != nil {
		return nil, err
	}
	st, err := q.store()
	if err != nil {
		return nil, err
	}
	g := &queue.Gate{Store: st, Keys: keys, Logf: q.Logf}
	if q.Cache != nil {
		g.Snapshots = snapshots{q.Cache, time.Now}
		g.Solutions = solutions{q.Cache}
	}
	if q.Limits != nil {
		g.Joins = joinCounter{q.Limits, q.Geo}
	}
	return g, nil
}

// lineGate is gate for a request the line must answer: what the operator
// has to set gets the setup page, any other failure a 503 page logged
// under who; ok is false when it has answered.
func (q *request) lineGate(w fsthttp.ResponseWriter, who string) (gate *queue.Gate, ok bool) {
	gate, err := q.gate()
	if err == nil {
		return gate, true
	}
	var setup *SetupError
	if errors.As(err, &setup) {
		q.notSetUp(w, setup)
		return nil, false
	}
	q.Logf("%s: cannot run the line: %v", who, err)
	q.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
		"This site's waiting room is not configured yet. Please try again in a minute.")
	return nil, false
}

// secret reads a secret the line cannot run without. What the operator has
// to fix comes back as a *SetupError; a failure to read, as a plain error.
func (q *request) secret(name string) ([]byte, error) {
	v, err := q.secrets.Get(name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, secretProblem(name, "is missing")
	case errors.Is(err, ErrStoreNotLinked):
		return nil, storeNotLinked(SecretStore, "fastly secret-store list")
	case err != nil:
		return nil, fmt.Errorf("secret %s: %w", name, err)
	case len(bytes.TrimSpace(v)) == 0:
		return nil, secretProblem(name, "is blank")
	case !q.Local && IsDevSecret(name, v):
		return nil, secretProblem(name, "holds the public development value from fastly.toml's [local_server]")
	}
	return v, nil
}

// keys reads and parses the signing keys. A request whose line is logged
// keeps them in its log, so the line's client hash does not read and
// parse them a second time.
func (q *request) keys() (*queue.KeySet, error) {
	if q.log != nil && q.log.keys != nil {
		return q.log.keys, nil
	}
	raw, err := q.secret(SecretSigningKeys)
	if err != nil {
		return nil, err
	}
	keys, err := q.parseKeys(string(raw))
	if err != nil {
		return nil, secretProblem(SecretSigningKeys, "is not a key set ("+err.Error()+")")
	}
	if q.log != nil {
		q.log.keys = keys
	}
	return keys, nil
}

// store is the rooms' store: each room's shards (package store/shard)
// over the database, calls counted into the request's log line when it
// has one.
func (q *request) store() (*shard.Store, error) {
	db, err := q.database()
	if err != nil {
		return nil, err
	}
	backends := []shard.Backend{q.withDownMarker(db)}
	for j := 1; j < q.settings.UpstashDatabases; j++ {
		more, err := q.databaseOf(j, db)
		if err != nil {
			return nil, err
		}
		backends = append(backends, q.withDownMarker(more))
	}
	return &shard.Store{Backends: backends, Shards: q.shardsOf}, nil
}

// withDownMarker is db with the POP's down marker (downMarked), when the
// POP has a cache to keep it in.
func (q *request) withDownMarker(db *store.Upstash) shard.Backend {
	if q.Cache == nil {
		return db
	}
	return downMarked{db, q.Cache, q.Logf}
}

// SecretUpstashTokenOf is the secret holding the REST token of Upstash
// database j (1 and up).
func SecretUpstashTokenOf(j int) string { return SecretUpstashToken + "_" + strconv.Itoa(j) }

// UpstashBackendOf is the Fastly backend of Upstash database j (1 and up).
func UpstashBackendOf(j int) string { return "upstash_" + strconv.Itoa(j) }

// databaseOf is Upstash database j (1 and up) of those upstash_databases
// counts, reached through its backend (which says where it is), like
// first in all else: its lines' random order is keyed as first's, so
// that where a shard lives changes nothing of its order.
func (q *request) databaseOf(j int, first *store.Upstash) (*store.Upstash, error) {
	if q.UpstashDatabase == nil {
		return nil, &SetupError{Setting: "config " + settings.KeyUpstashDatabases,
			Problem: fmt.Sprintf("is %d, but this host has no backend for databases beyond the first", q.settings.UpstashDatabases),
			Fix:     "fastly config-store-entry delete --store-id=" + configStoreID + " --key=" + settings.KeyUpstashDatabases}
	}
	token, err := q.secret(SecretUpstashTokenOf(j))
	if err != nil {
		return nil, err
	}
	transport := q.UpstashDatabase(j)
	if q.log != nil && transport != nil {
		transport = countedTransport{transport, &q.log.line}
	}
	return &store.Upstash{URL: UpstashBackendURL, Token: strings.TrimSpace(string(token)),
		Transport: transport, Timeout: first.Timeout, RandomKey: first.RandomKey}, nil
}

// shardsOf is how many shards the configured room runs as (1 for a room
// not configured).
func (q *request) shardsOf(room string) int {
	for _, r := range q.settings.Rooms {
		if r.Name == room {
			return max(r.Shards, 1)
		}
	}
	return 1
}

// database is the Upstash database of the config, calls counted into the
// request's log line when it has one.
func (q *request) database() (*store.Upstash, error) {
	url := q.settings.UpstashURL
	switch {
	case q.settings.UpstashUnset != nil:
		return nil, q.settings.UpstashUnset
	case url == "" && q.UpstashViaBackend:
		url = UpstashBackendURL
	case url == "":
		// Without a Fastly backend, nothing else says where the database is.
		return nil, upstashURLProblem("is missing")
	}
	token, err := q.secret(SecretUpstashToken)
	if err != nil {
		return nil, err
	}
	transport := q.Upstash
	if q.log != nil && transport != nil {
		transport = countedTransport{transport, &q.log.line}
	}
	return &store.Upstash{URL: url, Token: strings.TrimSpace(string(token)),
		Transport: transport, Timeout: q.settings.StoreTimeout, RandomKey: randomKey(token)}, nil
}

// randomKey seeds a new line's random calling order with a value visitors
// cannot know, derived from the store token.
func randomKey(token []byte) string {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("waiting-room random order"))
	return hex.EncodeToString(m.Sum(nil))
}

// The POP's snapshots of the lines (queue.Snapshot), kept in its cache.

// Cache is the POP's cache (Fastly's, at the edge): GetOrSet returns key's
// value, or runs fill once for every concurrent caller in the POP (request
// collapsing) and keeps its value for the TTL fill returns. Get returns
// key's value, nil when the POP has none. Set keeps value under key in the
// POP for ttl, in place of any value it had. Purge drops key's value in
// every POP (on Fastly, within about 150 ms).
type Cache interface {
	GetOrSet(key string, fill func() ([]byte, time.Duration, error)) ([]byte, error)
	Get(key string) ([]byte, error)
	Set(key string, value []byte, ttl time.Duration) error
	Purge(key string) error
}

// SnapshotKey is the cache key of the snapshot of shard i of room (each
// shard is a line of its own): shard 0's is the room's, as it always was.
func SnapshotKey(room string, i int) string { return "wr-snapshot/" + shard.Name(room, i) }

// snapshotDown, then the time, is cached in place of a snapshot whose fill
// failed, for as long. The requests that waited on that fill (the cache
// collapsed them behind it) began before that time: they are told the
// store is down at once, instead of each filling in turn behind it and
// each waiting out the store's timeout. A request that begins later asks
// the store itself, so an outage that ended costs nobody a busy page.
const snapshotDown = "wr-snapshot down "

// changed drops room's snapshots after an operator's action or an
// origin's command changed its line: far-from-front visitors then see a
// pause or an "admit N" at their next poll, not a TTL later. A failed purge
// costs only that: the snapshots still end with their TTL.
// A sharded room's action changed every shard's line.
func (h *Handler) changed(room string, shards int) {
	if h.Cache == nil {
		return
	}
	for i := 0; i < max(shards, 1); i++ {
		if err := h.Cache.Purge(SnapshotKey(room, i)); err != nil {
			h.Logf("room %s: snapshot of shard %d not purged (it ends with its TTL): %v", room, i, err)
		}
	}
}

// snapshots keeps the rooms' snapshots in a Cache; clock tells when a fill
// failed.
type snapshots struct {
	cache Cache
	clock func() time.Time
}

// Get implements queue.Snapshots.
func (c snapshots) Get(room *queue.Room, shard int, now time.Time, fill func() (queue.Snapshot, error)) (queue.Snapshot, error) {
	var filled *queue.Snapshot
	b, err := c.cache.GetOrSet(SnapshotKey(room.Name, shard), func() ([]byte, time.Duration, error) {
		s, err := fill()
		if err != nil {
			return strconv.AppendInt([]byte(snapshotDown), c.clock().UnixNano(), 10), room.SnapshotTTL(), nil
		}
		filled = &s
		b, err := s.MarshalText()
		return b, room.SnapshotTTL(), err
	})
	switch {
	case filled != nil:
		// The filler has it already, whatever the cache did with it.
		return *filled, nil
	case err != nil:
		return queue.Snapshot{}, fmt.Errorf("snapshot cache: %w", err)
	case bytes.HasPrefix(b, []byte(snapshotDown)):
		failed, err := strconv.ParseInt(string(b[len(snapshotDown):]), 10, 64)
		if err == nil && now.UnixNano() < failed {
			return queue.Snapshot{}, fmt.Errorf("%w: the POP's snapshot fill this request waited on failed", store.ErrUnavailable)
		}
		return queue.Snapshot{}, fmt.Errorf("%w: the POP's last snapshot fill failed", queue.ErrNoSnapshot)
	}
	var s queue.Snapshot
	err = s.UnmarshalText(b)
	return s, err
}

// Peek implements queue.Snapshots.
func (c snapshots) Peek(room *queue.Room, shard int) (queue.Snapshot, error) {
	b, err := c.cache.Get(SnapshotKey(room.Name, shard))
	switch {
	case err != nil:
		return queue.Snapshot{}, fmt.Errorf("snapshot cache: %w", err)
	case b == nil || bytes.HasPrefix(b, []byte(snapshotDown)):
		return queue.Snapshot{}, queue.ErrNoSnapshot
	}
	var s queue.Snapshot
	err = s.UnmarshalText(b)
	return s, err
}

// The POP's down marker: the latest store failure it saw for each line,
// which its every store call reports (store.Policy.FailedAt).

// downKey is the cache key of the POP's down marker for line, a store
// room name (a shard's own: each shard's database fails on its own).
func downKey(line string) string { return "wr-down/" + line }

// downMarked is a database whose line calls carry the POP's down marker for
// their line, and which marks the line down when a call fails (the store
// could not be reached or timed out). The store counts the silence since
// its last call as an outage only when a caller saw it fail: line time
// follows the wall clock otherwise. So a POP whose calls failed tells the
// store on its first call that succeeds, whoever makes it, and a
// visitor's place outlives the outage. The marker costs a cache read a
// call, and a write only when a call fails.
type downMarked struct {
	shard.Backend
	cache Cache
	logf  func(format string, args ...any)
}

// policy is p carrying the POP's latest failure for line, when it is later
// than what p already carries.
func (m downMarked) policy(line string, p store.Policy) store.Policy {
	b, err := m.cache.Get(downKey(line))
	if err != nil {
		m.logf("room %s: the POP's down marker not read (the call reports no failure): %v", line, err)
		return p
	}
	if b == nil {
		return p
	}
	ms, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || ms <= 0 {
		m.logf("room %s: the POP's down marker %q is not a time: ignored", line, b)
		return p
	}
	if at := time.UnixMilli(ms); at.After(p.FailedAt) {
		p.FailedAt = at
	}
	return p
}

// note marks line down at now when err says the store could not be
// reached, and passes err on. The marker is kept as long as the longest
// a place waits for its holder (the queue timeout, the session's
// inactivity timeout, the claim window): a holder whose calls fail calls
// at least that often to keep the place, and each failure writes the
// marker again, so it is there when the store answers again; a failure
// older than that explains no silence (a night after one timed-out poll
// counts in full).
func (m downMarked) note(line string, p store.Policy, now time.Time, err error) error {
	if !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	ttl := max(p.QueueTimeout, p.SessionTTL, p.ClaimWindow)
	if serr := m.cache.Set(downKey(line), strconv.AppendInt(nil, now.UnixMilli(), 10), ttl); serr != nil {
		m.logf("room %s: the POP's down marker not written (the next call cannot report the failure): %v", line, serr)
	}
	return err
}

// Join implements store.Store, downMarked.
func (m downMarked) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	pl, err := m.Backend.Join(ctx, room, m.policy(room, p), a, now)
	return pl, m.note(room, p, now, err)
}

// JoinPriority implements store.Store, downMarked.
func (m downMarked) JoinPriority(ctx context.Context, room string, p store.Policy, arrival string, inv store.Invite, now time.Time) (store.Place, error) {
	pl, err := m.Backend.JoinPriority(ctx, room, m.policy(room, p), arrival, inv, now)
	return pl, m.note(room, p, now, err)
}

// Poll implements store.Store, downMarked.
func (m downMarked) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	pl, err := m.Backend.Poll(ctx, room, m.policy(room, p), t, now)
	return pl, m.note(room, p, now, err)
}

// Renew implements store.Store, downMarked.
func (m downMarked) Renew(ctx context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (bool, store.Line, error) {
	ok, l, err := m.Backend.Renew(ctx, room, m.policy(room, p), s, now)
	return ok, l, m.note(room, p, now, err)
}

// End implements store.Store, downMarked.
func (m downMarked) End(ctx context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (store.Line, error) {
	l, err := m.Backend.End(ctx, room, m.policy(room, p), s, now)
	return l, m.note(room, p, now, err)
}

// Admit implements store.Store, downMarked.
func (m downMarked) Admit(ctx context.Context, room string, p store.Policy, n int64, now time.Time) (store.Line, error) {
	l, err := m.Backend.Admit(ctx, room, m.policy(room, p), n, now)
	return l, m.note(room, p, now, err)
}

// Control implements store.Store, downMarked.
func (m downMarked) Control(ctx context.Context, room string, p store.Policy, c store.Control, now time.Time) (store.Line, error) {
	l, err := m.Backend.Control(ctx, room, m.policy(room, p), c, now)
	return l, m.note(room, p, now, err)
}

// Operate implements store.Store, downMarked.
func (m downMarked) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	l, err := m.Backend.Operate(ctx, room, m.policy(room, p), a, now)
	return l, m.note(room, p, now, err)
}

// Stats implements store.Store, downMarked.
func (m downMarked) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	l, err := m.Backend.Stats(ctx, room, m.policy(room, p), now)
	return l, m.note(room, p, now, err)
}

// Limits counts what clients do, so that one client cannot take many
// places in a line or guess the admin password at speed. At the edge it is
// Fastly's Edge Rate Limiting: counters and penalty boxes shared within a
// POP (not across POPs), which may undercount by up to 10%. A nil Limits
// limits nothing.
type Limits interface {
	// Count adds one event for client to the named counter and reports
	// the events counted in the last minute, this one included.
	Count(counter, client string) (int, error)
	// Counted reports the events counted for client in the named counter
	// in the last minute, adding none.
	Counted(counter, client string) (int, error)
	// Penalize puts client in the named penalty box for d (whole minutes,
	// one at least: the platform's granularity).
	Penalize(box, client string, d time.Duration) error
	// Penalized reports whether client is in the named penalty box.
	Penalized(box, client string) (bool, error)
}

// joinCounter counts joins by client, network and autonomous system, and
// room, with the edge's Limits; geo finds an address's autonomous system
// (nil: unknown, not limited by it).
type joinCounter struct {
	limits Limits
	geo    Geo
}

// NewJoinCounter is the edge's join counter over l and g (nil: no
// autonomous system is known, so none is limited): what the edge's gate
// counts joins with, for a gate run outside the edge (the simulator's, in
// virtual time).
func NewJoinCounter(l Limits, g Geo) queue.JoinCounter { return joinCounter{limits: l, geo: g} }

// maxCounterName is the longest rate counter name Fastly accepts.
const maxCounterName = 64

// Join counts a join by each scope room limits, the address first, and
// stops at the first scope beyond its limit: a refused join is counted
// where it was refused, not in the wider scopes it never reached. Only an
// address beyond its own limit is put in the penalty box: a network or an
// autonomous system beyond its limit refuses the join, but boxing the
// address that happened to join next would let one bot behind a carrier's
// NAT or in a mobile carrier's AS send everyone there to the decoy.
func (j joinCounter) Join(room *queue.Room, v queue.Visitor) (string, error) {
	scopes := [...]struct {
		name, counter string
		key           func() (string, error)
		limit         int
		boxes         bool
	}{
		{"address", "wr_joins_", func() (string, error) { return v.Client, nil }, room.JoinsPerIPPerMinute, true},
		{"network", "wr_jnet_", func() (string, error) { return NetworkKey(v.Addr), nil }, room.JoinsPerNetworkPerMinute, false},
		{"autonomous system", "wr_jas_", func() (string, error) { return j.asKey(v.Addr) }, room.JoinsPerASPerMinute, false},
	}
	for _, s := range scopes {
		if s.limit <= 0 {
			continue
		}
		key, err := s.key()
		if err != nil {
			return "", err
		}
		if key == "" {
			continue // unknown: not limited by this scope
		}
		n, err := j.limits.Count(counterName(s.counter, room), key)
		if err != nil {
			return "", err
		}
		if n > s.limit {
			if s.boxes && room.Decoys() && v.Client != "" {
				// The address that went beyond its own limit is
				// decoyed for a while (queue's hostile): a place
				// refused now is not taken by its next arrival
				// either.
				if err := j.limits.Penalize(counterName("wr_jbox_", room), v.Client, JoinPenalty); err != nil {
					return s.name, fmt.Errorf("%s not put in the penalty box: %w", v.Client, err)
				}
			}
			return s.name, nil
		}
	}
	return "", nil
}

func (j joinCounter) Joins(room *queue.Room, client string) (int, error) {
	return j.limits.Counted(counterName("wr_joins_", room), client)
}

// JoinPenalty is how long an address that joined beyond a limit is sent
// to the decoy line: the platform's shortest penalty.
const JoinPenalty = time.Minute

func (j joinCounter) Penalized(room *queue.Room, v queue.Visitor) (bool, error) {
	if v.Client == "" {
		return false, nil
	}
	return j.limits.Penalized(counterName("wr_jbox_", room), v.Client)
}

// asKey names addr's autonomous system for the counters ("AS54113"), or
// "" when the platform knows none.
func (j joinCounter) asKey(addr netip.Addr) (string, error) {
	if j.geo == nil || !addr.IsValid() {
		return "", nil
	}
	as, err := j.geo.AS(addr)
	if err != nil || as <= 0 {
		return "", err
	}
	return "AS" + strconv.Itoa(as), nil
}

// counterName is the name of room's counter called prefix (one per scope).
func counterName(prefix string, room *queue.Room) string {
	name := prefix + room.Name
	if len(name) > maxCounterName {
		// Room names are up to 64 characters; two rooms whose names
		// agree as far as the name fits (55 to 57 characters) would
		// share a counter, which only counts more.
		name = name[:maxCounterName]
	}
	return name
}
