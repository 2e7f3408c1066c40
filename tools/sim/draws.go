package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/draw"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Significance is the chi-square test's level: a fair draw's figure
// exceeds the critical value once in a thousand.
const Significance = 0.001

// DrawFairness is the chi-square test of a draw over many draws: the
// (ticket, place) table counting how often each ticket was called at each
// place, against every place equally likely (Pearson's statistic, with
// (tickets-1)² degrees of freedom).
type DrawFairness struct {
	// Store says the draws were the store's script on Redis; otherwise
	// they were package draw's order, computed for many keys.
	Store          bool
	Tickets, Draws int
	Stat           float64
	DOF            int
	// Critical is the chi-square distribution's upper Significance point
	// for DOF.
	Critical float64
	// Agreed counts the store's draws whose calling order was the one
	// package draw computes from the revealed key.
	Agreed int
	// Distinct counts the different round keys among the draws' keys:
	// fewer than the keys would mean some draws repeat another's order,
	// which the chi-square test sees as an excess (as it did when every
	// round key followed from one 26-bit hash).
	Distinct int
}

// Fair reports whether the figure is within the critical value.
func (d DrawFairness) Fair() bool { return d.Stat <= d.Critical }

// KeyedDrawFairness tests package draw's order of tickets tickets over
// draws keys. The keys look like the store's (Upstash.DrawKey, 64 hex
// digits of an HMAC): the SHA-256 of "bench-<i>" in hex.
func KeyedDrawFairness(tickets, draws int) DrawFairness {
	keys := make([]string, draws)
	distinct := make(map[draw.Keys]bool, draws)
	for i := range keys {
		sum := sha256.Sum256([]byte("bench-" + strconv.Itoa(i)))
		keys[i] = hex.EncodeToString(sum[:])
		distinct[draw.KeysOf(keys[i])] = true
	}
	stat, dof := draw.ChiSquare(int64(tickets), draws, func(i int) string { return keys[i] })
	return DrawFairness{Tickets: tickets, Draws: draws, Stat: stat, DOF: dof, Critical: ChiSquareCritical(dof, Significance), Distinct: len(distinct)}
}

// MaxDrawTickets bounds the tickets of one of StoreDrawFairness's draws:
// its joins are a millisecond apart inside a pre-queue of a minute.
const MaxDrawTickets = 1000

// StoreDrawFairness makes draws real draws of tickets tickets with the
// store's script on the Redis at addr, each in a room of its own (so each
// has its own draw key): the tickets join a paused room's pre-queue, and
// once it is drawn the operator's admit calls them one at a time, so the
// called set shows the order. Each order is also checked against package
// draw with the key the store revealed.
func StoreDrawFairness(ctx context.Context, addr string, tickets, draws int) (DrawFairness, error) {
	if tickets < 2 || tickets > MaxDrawTickets || draws < 1 {
		return DrawFairness{}, fmt.Errorf("store draws: %d draws of %d tickets; want at least 1 draw of 2 to %d tickets", draws, tickets, MaxDrawTickets)
	}
	n := int64(tickets)
	st, redis := newStore(addr), resp.NewPool(addr, 2)
	ev := &store.Event{ID: EventName, PrequeueFrom: Start, Starts: Start.Add(time.Minute), Ends: Start.Add(time.Hour)}
	p := store.Policy{ClaimWindow: time.Hour, SessionTTL: time.Minute, QueueTimeout: time.Hour, Event: ev}
	counts := make([]int, n*n)
	distinct := make(map[draw.Keys]bool, draws)
	res := DrawFairness{Store: true, Tickets: tickets, Draws: draws}
	for i := 0; i < draws; i++ {
		room := "draw-" + strconv.Itoa(i)
		order, ln, err := storeDraw(ctx, st, redis, room, p, n)
		if err != nil {
			return res, fmt.Errorf("store draw %d (room %s): %w", i, room, err)
		}
		want, err := draw.Order(ln.Event.Key, ln.Event.DrawFirst, ln.Event.DrawLast)
		if err != nil {
			return res, fmt.Errorf("store draw %d (room %s): %w", i, room, err)
		}
		if slices.Equal(order, want) {
			res.Agreed++
		}
		distinct[draw.KeysOf(ln.Event.Key)] = true
		for place, t := range order {
			counts[(t-ln.Event.DrawFirst)*n+int64(place)]++
		}
	}
	res.Stat, res.DOF = pearson(counts, float64(draws)/float64(n)), (tickets-1)*(tickets-1)
	res.Critical, res.Distinct = ChiSquareCritical(res.DOF, Significance), len(distinct)
	return res, nil
}

// storeDraw fills room's pre-queue with n tickets, draws it, and calls it
// one ticket at a time: the tickets in the order called, and the line as
// the draw left it.
func storeDraw(ctx context.Context, st *store.Upstash, redis *resp.Pool, room string, p store.Policy, n int64) ([]int64, store.Line, error) {
	ev := p.Event
	if _, err := st.Control(ctx, room, p, store.Pause, ev.PrequeueFrom); err != nil {
		return nil, store.Line{}, err
	}
	for k := int64(0); k < n; k++ {
		pl, err := st.Join(ctx, room, p, store.Arrival{ID: "a" + strconv.FormatInt(k, 10)}, ev.PrequeueFrom.Add(time.Duration(k)*time.Millisecond))
		if err != nil {
			return nil, store.Line{}, err
		}
		if pl.Outcome != store.Waiting {
			return nil, store.Line{}, fmt.Errorf("join %d: outcome %d, want to wait in the pre-queue", k, pl.Outcome)
		}
	}
	ln, err := st.Stats(ctx, room, p, ev.Starts)
	if err != nil {
		return nil, ln, err
	}
	if e := ln.Event; e.Phase != store.Drawn || e.DrawLast-e.DrawFirst+1 != n || e.Key == "" {
		return nil, ln, fmt.Errorf("at the start the event stood at %+v, want %d tickets drawn and the key revealed", e, n)
	}
	calledKey := st.Keys(room)[2]
	seen := make(map[int64]bool, n)
	var order []int64
	for k := int64(0); k < n; k++ {
		a, err := st.Admit(ctx, room, p, 1, ev.Starts)
		if err != nil {
			return nil, ln, err
		}
		if a.CalledNow != 1 {
			return nil, ln, fmt.Errorf("admit 1 (call %d) called %d", k, a.CalledNow)
		}
		called, err := calledTickets(redis, calledKey)
		if err != nil {
			return nil, ln, err
		}
		for _, t := range called {
			if seen[t] {
				continue
			}
			if t < ln.Event.DrawFirst || t > ln.Event.DrawLast {
				return nil, ln, fmt.Errorf("call %d called ticket %d, outside the drawn %d..%d", k, t, ln.Event.DrawFirst, ln.Event.DrawLast)
			}
			seen[t] = true
			order = append(order, t)
		}
		if int64(len(order)) != k+1 {
			return nil, ln, fmt.Errorf("after %d calls %d tickets are called", k+1, len(order))
		}
	}
	return order, ln, nil
}
