package control

import (
	"fmt"
	"time"
)

// Guesses limits the wrong secrets one client may try, so a secret cannot
// be guessed at speed. The panel's password and the API's token are
// limited alike: a client that guesses at one is refused by both.
type Guesses interface {
	// Refused reports whether the client has tried too many wrong
	// secrets and must wait, and for how long at most.
	Refused() (retry time.Duration, refused bool)
	// Wrong counts a wrong secret from the client.
	Wrong()
}

// Secret describes a secret that opens an operator's surface (the panel's
// password, the API's token), so that a value too weak to open it is
// refused with a sentence naming the secret and the rule.
type Secret struct {
	// Name is the secret's name in the secret store, e.g. admin_password.
	Name string
	// Opens is what the secret opens, e.g. "the panel".
	Opens string
	// MinLength is the shortest value accepted.
	MinLength int
	// Make is a command that makes a value long enough.
	Make string
}

// Problem says why value cannot open the surface, naming the secret and
// the rule, or is "" when it can.
func (s Secret) Problem(value []byte) string {
	switch {
	case len(value) == 0:
		return fmt.Sprintf("set %s in the secret store to enable %s", s.Name, s.Opens)
	case len(value) < s.MinLength:
		return fmt.Sprintf("%s is shorter than %d characters; set a longer one (%s makes one)", s.Name, s.MinLength, s.Make)
	}
	return ""
}

// RetryMinutes is retry in whole minutes, rounded up, for the sentence
// that tells a refused client how long to wait.
func RetryMinutes(retry time.Duration) int {
	return int((retry + time.Minute - 1) / time.Minute)
}
