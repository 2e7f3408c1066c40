package match

import (
	"errors"
	"fmt"
)

// A Room is a room as matching sees it: a name for the log, where it
// applies, and which requests skip its line.
type Room interface {
	Rules() (name string, where *Target, skip *Bypass)
}

// Judgement is where a request stands: in a room's line (Protected), let
// through by a bypass rule (Bypass set, Room the room it was in), or in no
// room (Room the zero value: nil for a pointer), when it goes to the origin
// untouched.
type Judgement[R Room] struct {
	// Room is the room the request is in.
	Room R
	// Bypass names the rule that let the request through ("global:" first
	// when it is one of the global rules), or is "".
	Bypass string
	// Protected is true when the request must have its place in Room's
	// line.
	Protected bool
}

// Judge decides which room's line a request is in. Each reading of its
// path (req.Paths) is in the most specific room that matches it (see
// Specificity; rooms tried in order, so the index breaks ties), and the
// request is protected when any reading is in a room and bypassed by
// neither the global rules nor that room's: a request the rules judge
// under one reading cannot walk around the line under another. When none
// is protected, the judgement names the room and rule of the first
// reading in a room. An error comes only from the platform's facts (a
// failed geolocation...): it is for the log, and the judgement stands,
// made as if the fact were unknown.
func Judge[R Room](rooms []R, global *Bypass, req *Request) (Judgement[R], error) {
	var errs []error
	var let Judgement[R]
	in := false
	for _, path := range req.Paths {
		i := bestRoom(rooms, req, path, &errs)
		if i < 0 {
			continue
		}
		name, _, skip := rooms[i].Rules()
		rule, bypassed := "", false
		if global != nil {
			var err error
			if rule, bypassed, err = global.Match(req, path); err != nil {
				errs = appendErrors(errs, "bypass", err)
			}
			if bypassed {
				rule = "global:" + rule
			}
		}
		if !bypassed {
			var err error
			if rule, bypassed, err = skip.Match(req, path); err != nil {
				errs = appendErrors(errs, fmt.Sprintf("room %q", name), err)
			}
		}
		if !bypassed {
			return Judgement[R]{Room: rooms[i], Protected: true}, errors.Join(errs...)
		}
		if !in {
			let, in = Judgement[R]{Room: rooms[i], Bypass: rule}, true
		}
	}
	return let, errors.Join(errs...)
}

// bestRoom is the index of the most specific room holding a request whose
// path reads as path, the earlier one of equals, or -1.
func bestRoom[R Room](rooms []R, req *Request, path string, errs *[]error) int {
	best := -1
	var bestSpec Specificity
	for i, r := range rooms {
		name, where, _ := r.Rules()
		spec, ok, err := where.Match(req, path)
		if err != nil {
			*errs = appendErrors(*errs, fmt.Sprintf("room %q", name), err)
		}
		if ok && (best < 0 || spec.MoreThan(bestSpec)) {
			best, bestSpec = i, spec
		}
	}
	return best
}

// appendErrors appends err (not nil), or each error it joins, to errs, each
// prefixed with where it arose, so every log line says which rules failed.
func appendErrors(errs []error, where string, err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			errs = appendErrors(errs, where, e)
		}
		return errs
	}
	return append(errs, fmt.Errorf("%s: %w", where, err))
}
