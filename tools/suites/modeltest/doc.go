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
// that every move was allowed.
//
// Running it:
//
//	go test ./modeltest                     # make test: 100 sequences of 60 actions on average
//	go test ./modeltest -run TestModel -rapid.checks=5000 -rapid.steps=100   # CI, fuzzing
//	go test ./modeltest -run TestModel -rapid.seed=N                        # one sequence again
//	MODELTEST_SCRIPT=old-line.lua go test ./modeltest   # another script, speaking the same protocol
//	MODELTEST_LARGE=200000 go test ./modeltest -run TestBoundedWork -timeout 30m
//
// A failure prints the shrunk sequence, call by call with each answer, the
// model's view of the line, and the rule broken. rapid also saves it under
// testdata/rapid/TestModel/ and replays it first on the next run; a
// counterexample worth keeping is better written out in TestDefects, which
// outlives changes to the generator. MODELTEST_ACTIONS and MODELTEST_MAXGAP
// (see knobs) narrow the sequences, to look for one defect while another
// is known.
//
// The test files hold everything; this file only names the package.
package modeltest
