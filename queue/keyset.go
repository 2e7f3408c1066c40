package queue

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/edgequeue/waitingroom/queue/internal/passjwt"
)

// ErrBadKeySet is returned by ParseKeySet for an unusable key set.
var ErrBadKeySet = errors.New("invalid signing key set")

// KeySet holds the HMAC keys passes are signed with: the current key signs,
// every key in the set verifies. Rotating keys is routine (add a new current
// key, keep the old one until its passes expire); emptying the set of old
// keys sends every visitor back to the line.
//
// A KeySet is safe for concurrent use. Signing and verifying allocate as
// little as they can, because TinyGo's collector makes every byte count
// (see package queue/internal/passjwt).
type KeySet struct {
	// keys[0] is the current key. A slice rather than a map: there are one
	// to three keys, and a TinyGo map lookup by string allocates.
	keys []passjwt.Key
	// decoys[i] signs and verifies the decoy passes of keys[i] (see
	// decoyKey): under the same key id, so only the signature, which the
	// client cannot check, tells a decoy's ticket from a real one.
	decoys []passjwt.Key
}

// decoyLabel is what a room key is mixed with to derive its decoy key.
const decoyLabel = "waitingroom decoy pass"

// decoyKey derives the key decoy passes are signed with from a room key:
// HMAC-SHA256(key, decoyLabel). Without the room key neither can be
// computed, and a token signed under one never verifies under the other,
// so a real ticket cannot be made a decoy's, nor a decoy's ticket real.
func decoyKey(id string, key []byte) passjwt.Key {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(decoyLabel))
	return passjwt.NewKey(id, m.Sum(nil))
}

// minKeyBytes is the shortest HS256 key accepted: a key shorter than the
// hash is a weaker key, never a valid configuration.
const minKeyBytes = 32

// ParseKeySet reads a key set in the form "kid:base64key,kid2:base64key2".
// The first key is the current one. Keys must decode to at least 32 bytes.
func ParseKeySet(s string) (*KeySet, error) {
	ks := &KeySet{}
	for _, item := range strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' }) {
		kid, enc, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("%w: entry %q is not kid:base64key", ErrBadKeySet, redact(item))
		}
		if err := CheckKeyID(kid); err != nil {
			return nil, fmt.Errorf("%w: key id %q %v", ErrBadKeySet, kid, err)
		}
		key, err := decodeKey(enc)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: not base64", ErrBadKeySet, kid)
		}
		if len(key) < minKeyBytes {
			return nil, fmt.Errorf("%w: key %q: %d bytes, need at least %d", ErrBadKeySet, kid, len(key), minKeyBytes)
		}
		if ks.find(kid) != nil {
			return nil, fmt.Errorf("%w: key %q appears twice", ErrBadKeySet, kid)
		}
		ks.keys = append(ks.keys, passjwt.NewKey(kid, key))
		ks.decoys = append(ks.decoys, decoyKey(kid, key))
	}
	if len(ks.keys) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrBadKeySet)
	}
	return ks, nil
}

// MaxKeyIDLength bounds a signing key's id, which every pass carries in
// its header.
const MaxKeyIDLength = 32

// CheckKeyID refuses a key id that is not 1 to 32 of A-Z, a-z, 0-9, ".",
// "_" and "-". Such an id needs no escaping in a token's JSON header, so
// it reads back as it was written; a key id that is not even UTF-8
// ("\xc3") did not, and every pass signed under it was refused.
func CheckKeyID(id string) error {
	if id == "" || len(id) > MaxKeyIDLength {
		return errors.New("must be 1 to 32 characters")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return errors.New("may only hold A-Z, a-z, 0-9, '.', '_' and '-'")
		}
	}
	return nil
}

func (ks *KeySet) find(kid string) *passjwt.Key {
	for i := range ks.keys {
		if ks.keys[i].ID() == kid {
			return &ks.keys[i]
		}
	}
	return nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// redact keeps a key's secret out of error messages.
func redact(item string) string {
	if kid, _, ok := strings.Cut(item, ":"); ok {
		return kid + ":…"
	}
	if len(item) > 8 {
		return item[:4] + "…"
	}
	return item
}

// Key returns the current signing key; the admin panel derives its CSRF
// tokens from it.
func (ks *KeySet) Key() []byte {
	if ks == nil || len(ks.keys) == 0 {
		return nil
	}
	return ks.keys[0].Secret()
}
