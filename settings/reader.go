package settings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Source is where a Reader finds values by key: the config store.
type Source interface {
	Get(key string) (string, error)
}

// Reader reads the config store's keys by the table: a value that is
// missing takes the key's default, and a value that breaks the key's rule
// takes it too, with a problem naming the key, the value and the rule.
type Reader struct {
	Source Source
	// NotFound is the error Source returns (or wraps) for a key it does
	// not hold.
	NotFound error
	// Problems are the values that could not be used, for the log.
	Problems []error
	// Failed is the first error Source returned other than NotFound.
	Failed error
}

// Value reads key. It reports false when the key is missing or could not
// be read (a problem).
func (r *Reader) Value(key string) (string, bool) {
	v, err := r.Source.Get(key)
	switch {
	case err == nil:
		return v, true
	case !errors.Is(err, r.NotFound):
		r.fail(key, err)
	}
	return "", false
}

// OldNames records a problem for each config store key set under its old
// name (Renames) while its new name is not. It reads every old name, so
// the edge asks once per sandbox (LoadSandboxLimits), not per request.
func (r *Reader) OldNames() {
	for _, rn := range Renames {
		if _, ok := Lookup(Store[:], rn.New); !ok {
			continue // a room's field: a room with it is invalid
		}
		if _, err := r.Source.Get(rn.New); !errors.Is(err, r.NotFound) {
			continue
		}
		if _, err := r.Source.Get(rn.Old); err == nil {
			r.Problems = append(r.Problems, fmt.Errorf("%s: set %s instead", rn.Problem(), rn.New))
		} else if !errors.Is(err, r.NotFound) {
			r.fail(rn.Old, err)
		}
	}
}

func (r *Reader) fail(key string, err error) {
	r.Problems = append(r.Problems, fmt.Errorf("%s: %v", key, err))
	if r.Failed == nil {
		r.Failed = err
	}
}

// Number reads the numeric key (Int, Number or Duration), or its default.
func (r *Reader) Number(key string) float64 {
	return r.NumberOr(key, Get(Store[:], key).Default)
}

// NumberOr reads the numeric key, or def, where the default depends on
// more than the table (the build, for sandbox_requests).
func (r *Reader) NumberOr(key string, def float64) float64 {
	v, ok := r.Value(key)
	if !ok {
		return def
	}
	n, err := Get(Store[:], key).Parse(v)
	if err != nil {
		r.Problems = append(r.Problems, fmt.Errorf("%s: %q must be %s; using %s", key, v, err, format(def)))
		return def
	}
	return n
}

// Int reads the whole-number key, or its default.
func (r *Reader) Int(key string) int { return int(r.Number(key)) }

// Duration reads the duration key, or its default.
func (r *Reader) Duration(key string) time.Duration { return Seconds(r.Number(key)) }

// Bool reads the true-or-false key; what a value other than true or false
// leaves (its default) is said by then, as "client addresses are logged as
// hashes".
func (r *Reader) Bool(key, then string) bool {
	s := Get(Store[:], key)
	def := s.DefaultText == "true"
	v, ok := r.Value(key)
	switch {
	case !ok:
		return def
	case v == "true":
		return true
	case v == "false":
		return false
	}
	r.Problems = append(r.Problems, fmt.Errorf("%s: %q must be true or false; %s", key, v, then))
	return def
}

// Seconds is a duration setting's value as a time.Duration.
func Seconds(n float64) time.Duration {
	return time.Duration(n * float64(time.Second))
}

// Parse reads v, the config store's text of the numeric setting s, and
// checks it against s's rule: the error, when there is one, is the rule
// (Rule).
func (s Setting) Parse(v string) (float64, error) {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || s.Check(n) != nil {
		return 0, errors.New(s.Rule())
	}
	return n, nil
}

// Check checks n against the numeric setting's range and whether it must
// be whole, saying what is wrong as package queue's room errors do.
func (s Setting) Check(n float64) error {
	switch {
	case s.Ranged && !(n >= s.Min && n <= s.Max):
		return fmt.Errorf("%s: must be between %g and %g, got %g", s.Name, s.Min, s.Max, n)
	case s.Whole() && n != float64(int64(n)):
		return fmt.Errorf("%s: must be a whole number, got %g", s.Name, n)
	}
	return nil
}

// Whole reports whether the numeric setting takes whole numbers only.
func (s Setting) Whole() bool {
	return s.Kind == Int || s.Kind == Duration && !s.Fraction
}

// Rule says what a value of s must be, e.g. "a whole number of seconds
// from 0 (off) to 63072000".
func (s Setting) Rule() string {
	switch {
	case s.Kind == Bool:
		return "true or false"
	case s.Choices != "":
		return "one of " + strings.ReplaceAll(s.Choices, "|", ", ")
	case !s.Kind.Numeric():
		return s.Kind.String()
	}
	rule := "a number"
	if s.Whole() {
		rule = "a whole number"
	}
	if s.Unit != "" {
		rule += " of " + s.Unit
	}
	if s.Ranged {
		min := format(s.Min)
		if s.Min == 0 && s.Off != "" {
			min += " (" + s.Off + ")"
		}
		rule += " from " + min + " to " + format(s.Max)
	}
	return rule
}

// DefaultString is the default as the log and the documentation write it.
func (s Setting) DefaultString() string {
	switch {
	case s.TinyGoDefault != 0:
		return format(s.Default) + " (Go build), " + format(s.TinyGoDefault) + " (TinyGo build)"
	case s.Kind.Numeric() && s.DefaultText == "":
		return format(s.Default)
	}
	return s.DefaultText
}

func format(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }
