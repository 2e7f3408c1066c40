package modeltest

import (
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// TestDefects replays, as named sequences, the counterexamples rapid found
// against the script as it was before issue 23, and before issue 34
// (shrunk by rapid, then tidied by hand), one per defect of the issue, and
// a few of the rules they break from the other side. Each must now hold:
// the model checks every call, as in TestModel.
func TestDefects(t *testing.T) {
	e := newEnv(t)
	const s = time.Second
	cases := []struct {
		name string
		p    store.Policy
		run  func(h *harness)
	}{{
		// Defect 1: the poll of a lapsed priority ticket was given a
		// new priority ticket, without an invite's use.
		name: "a lapsed priority ticket gets no new one without an invite use",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			h.operate(string(store.Pause), 0, store.Overrides{})
			v := h.newVisitor(&invites[0])
			h.visit(v)
			h.keepCalling(65*s, 5*s, nil)
			h.visit(v) // Lost, and PriorityIssued stays 1
		},
	}, {
		// Defect 2: the poll of a lapsed ticket was given a new ticket,
		// a place taken without the join door's limit.
		name: "a lapsed ticket gets no new place through a poll",
		p:    basePolicy(0, 6, 1, 0.5),
		run: func(h *harness) {
			h.visit(h.newVisitor(nil)) // the burst: called at once
			w := h.newVisitor(nil)
			h.visit(w)                    // waits; called 10 s later, never claims
			h.keepCalling(65*s, 5*s, nil) // the call lapses
			h.visit(w)                    // Lost, and Issued stays 2
			h.visit(w)                    // the join door: a new ticket
		},
	}, {
		// Defect 2, after a reset: a ticket of the old line was given a
		// place in the new one.
		name: "a ticket of an earlier epoch gets no place in the new line",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			v := h.newVisitor(nil)
			h.operate(string(store.Pause), 0, store.Overrides{})
			h.visit(v)
			h.operate(store.OpReset, 0, store.Overrides{})
			h.visit(v) // Lost, and Issued stays 0
		},
	}, {
		// Defect 3: an event re-scheduled under the name of one already
		// drawn was taken for it, so its pre-queue never opened and
		// newcomers were called at once.
		name: "an event re-scheduled under a drawn one's name has a pre-queue of its own",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			h.schedule("weekly", 0, 20*s, time.Minute)
			v := h.newVisitor(nil)
			h.visit(v)                     // in the pre-queue
			h.keepCalling(80*s, 5*s, h.vs) // drawn at +20s; the event ends at +1m20s
			h.schedule("weekly", 0, time.Hour, time.Hour)
			h.visit(h.newVisitor(nil)) // held for next week's draw, not called
		},
	}, {
		// Defect 4: the renewal of a session that had lapsed took it
		// back, past the capacity, the switches and anyone waiting.
		name: "a lapsed session is not taken back by a renewal",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			v := h.newVisitor(nil)
			h.visit(v)
			h.keepCalling(95*s, 5*s, nil)
			h.visit(v) // false
		},
	}, {
		// Defect 7: line time ran at most 5 s per call, so with calls
		// 10 s apart a silent session held its place twice as long: the
		// issue's case, with one place.
		name: "a silent session's place goes to the next visitor SessionTTL after its last renewal",
		p:    basePolicy(1, 0, 1, 0.5),
		run: func(h *harness) {
			h.visit(h.newVisitor(nil)) // admitted, then silent
			w := h.newVisitor(nil)
			h.visit(w)
			h.keepCalling(150*s, 10*s, []*visitor{w}) // called at +1m40s, the first poll after +1m30.5s
		},
	}, {
		// Defect 7, in a room with nobody waiting: a quiet spell counts
		// in full.
		name: "a quiet spell with nobody in line counts in full",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			v := h.newVisitor(nil)
			h.visit(v)
			h.advance(100 * s)
			h.visit(v) // false: the session lapsed at +1m30.5s
		},
	}, {
		// The other side of line time: a silence in which the edge saw
		// the store fail (the POP's down marker, a failed renewal) is an
		// outage; nobody loses a place or a session to it.
		name: "an outage costs nobody a place",
		p:    basePolicy(1, 0, 1, 0.5),
		run: func(h *harness) {
			v, w := h.newVisitor(nil), h.newVisitor(nil)
			h.visit(v)
			h.visit(w)
			h.outage(10*time.Minute, seenByPOP) // v renews, reporting the failure; w polls
			h.endSession(v)
			h.keepCalling(30*s, 5*s, []*visitor{w}) // w is called when v's pass stops admitting
			h.outage(10*time.Minute, seenByPOP)     // w alone, in a session
		},
	}, {
		// Lost answers: every call retried with the same pass or arrival
		// finds the same place.
		name: "a lost answer's retry finds the same place",
		p:    basePolicy(1, 0, 1, 0.5),
		run: func(h *harness) {
			v := h.newVisitor(nil)
			h.lose(v, 0) // join, called at once
			h.lose(v, s) // renew
			w := h.newVisitor(&invites[1])
			h.lose(w, 3*s) // join the priority lane, wait: one use
			h.endSession(v)
			h.keepCalling(30*s, 5*s, []*visitor{w}) // w is called, and claims
			h.lose(w, 0)
		},
	}, {
		// Issue 34, defect 4: a silence with tickets left behind was
		// taken for an outage, so line time stood still through the
		// night and a newcomer found the room full of the gone.
		name: "a night with tickets left behind counts in full",
		p:    basePolicy(1, 0, 1, 0.5),
		run: func(h *harness) {
			h.visit(h.newVisitor(nil)) // admitted, then gone
			h.visit(h.newVisitor(nil)) // waits, then gone
			h.advance(8 * time.Hour)
			h.visit(h.newVisitor(nil)) // called at once: both places lapsed
		},
	}, {
		// Issue 34, defect 4: visitors polling slower than refresh (a
		// background tab) made every gap an outage, so a silent
		// session held its place four times as long.
		name: "polls slower than refresh leave line time on the wall clock",
		p:    basePolicy(1, 0, 1, 0.5),
		run: func(h *harness) {
			h.visit(h.newVisitor(nil)) // admitted, then silent
			w := h.newVisitor(nil)
			h.visit(w)
			h.keepCalling(120*s, 20*s, []*visitor{w}) // called at +1m40s, the first poll after +1m30.5s
		},
	}, {
		// Issue 34, defect 4, the other side: an outage the POP saw
		// (its down marker, on every call) counts a step, with nobody
		// in line and no renewal to report it.
		name: "an outage the POP saw keeps an ended session's place",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			v := h.newVisitor(nil)
			h.visit(v)
			h.endSession(v)            // its place held until +20.5s
			h.outage(40*s, seenByPOP)  // seen failing at +20s
			h.visit(h.newVisitor(nil)) // the ended place still held
		},
	}, {
		// Issue 34, defect 2: the join of a known arrival whose place
		// was gone handed out a new ticket: one solution, a place each
		// time the last one ended.
		name: "a known arrival whose place is gone takes no new ticket",
		p:    basePolicy(0, 0, 1, 0.5),
		run: func(h *harness) {
			v := h.newVisitor(nil)
			h.visit(v) // admitted
			h.endSession(v)
			h.replay(v, v.arrival) // Lost, and Issued stays 1
			w := h.newVisitor(&invites[1])
			h.visit(w) // admitted, one use of three
			h.endSession(w)
			h.replay(w, w.arrival) // Lost, and no use taken
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(e.harness(t, c.p)) })
	}
}
