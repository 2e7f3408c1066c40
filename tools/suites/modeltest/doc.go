// Package modeltest checks the store's script (store/line.lua) against a
// small reference model of a place's life: rapid draws random sequences of
// visitors joining, polling, renewing, ending, lapsing and losing answers,
// of operators pausing, admitting, overriding limits and resetting, of
// events scheduled, moved and re-scheduled, and of quiet spells and
// outages; each call runs the real script on a real redis-server through
// store.Upstash and the Upstash stand-in, in virtual time, and its answer
// is compared with what the model allows. The model is the specification
// (issue 23's semantics), written to be read: it decides what it can
// (outcomes, tickets handed out, which tickets hold places, line time,
// the event's phases) and learns from the answer what it leaves to the
// script (how far the rate and the capacity let the line move), checking
// that every move was allowed. Line time follows the wall clock except for
// a silence the edge saw the store fail in (the POP's down marker on every
// call, or a session pass's failed renewal), and a join with an arrival
// the line knows takes no second ticket, its place held or gone.
//
// TestShardedModel holds a sharded room (package shard over the script) to
// its capacity, to no shard starving while the room admits, and to an
// operator's action applying once when it fails on one shard and is
// retried with the same id. TestDoor drives the door (queue.Gate over the
// script) with clients that keep every pass: a join shows at least the
// work of the rung in force when it joins, and no arrival is given a
// second ticket.
//
// Running it:
//
//	go test ./modeltest                     # make test: 100 sequences of 60 actions on average
//	go test ./modeltest -run 'TestModel$' -rapid.checks=5000 -rapid.steps=100   # make model (CI), fuzzing
//	go test ./modeltest -run TestModel -rapid.seed=N                        # one sequence again
//	MODELTEST_SCRIPT=old-line.lua go test ./modeltest   # another script, speaking the same protocol
//	MODELTEST_LARGE=200000 go test ./modeltest -run TestBoundedWork -timeout 30m
//
// A failure prints the shrunk sequence, call by call with each answer, the
// model's view of the line, and the rule broken. rapid also saves it under
// testdata/rapid/TestModel/ and replays it first on the next run; a
// counterexample worth keeping is better written out in TestDefects, which
// outlives changes to the generator. MODELTEST_ACTIONS (every test's
// actions) and MODELTEST_MAXGAP (TestModel's; see knobs) narrow the
// sequences, to look for one defect while another is known.
//
// The test files hold everything; this file only names the package.
package modeltest
