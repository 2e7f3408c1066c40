package passjwt

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Reasons SignedBy refuses a token. Package queue turns each into a pass
// error of its own, without allocating.
var (
	ErrMalformed    = errors.New("not a signed token")
	ErrUnknownKey   = errors.New("unknown key id or header")
	ErrBadSignature = errors.New("signature does not match")
)

// Key is one HS256 signing key, with what signing and checking under it
// need computed once.
type Key struct {
	id     string
	secret []byte
	// block is the HMAC key block (RFC 2104): the secret padded with zeros,
	// or its SHA-256 when longer than a block, as crypto/hmac does.
	block [sha256.BlockSize]byte
	// header is the token's first segment for this key, base64url of
	// {"alg":"HS256","kid":…,"typ":"JWT"}: the bytes jwt wrote when it
	// signed (it marshals its header map with sorted keys), so passes signed
	// before and after a deploy look alike.
	header string
	// secretAny is secret boxed once for jwt's key function, whose
	// interface result would otherwise allocate on every Parse.
	secretAny any
}

// NewKey prepares secret for signing under the key id id, which must need
// no escaping in JSON (queue.CheckKeyID makes sure).
func NewKey(id string, secret []byte) Key {
	k := Key{id: id, secret: secret}
	if len(secret) > len(k.block) {
		sum := sha256.Sum256(secret)
		copy(k.block[:], sum[:])
	} else {
		copy(k.block[:], secret)
	}
	// Sorted keys, as encoding/json writes jwt's header map.
	h := make([]byte, 64+6*len(id))
	n := put(h, 0, `{"alg":"HS256","kid":`)
	n = putString(h, n, id)
	n = put(h, n, `,"typ":"JWT"}`)
	if n < 0 { // unreachable: a key id's JSON is at most six times its length
		n = 0
	}
	k.header = base64.RawURLEncoding.EncodeToString(h[:n])
	k.secretAny = secret
	return k
}

// ID is the key's id, the "kid" of its tokens' header.
func (k *Key) ID() string { return k.id }

// Secret is the key itself.
func (k *Key) Secret() []byte { return k.secret }

// Sizes of the stack buffers Sign and SignedBy work in. A pass's payload is
// under 300 bytes (room names are at most 64); a longer one still works,
// through the heap.
const (
	payloadBuf = 320
	tokenBuf   = 704
	macInline  = 512 // the longest signing input checked without allocating
)

// Sign encodes c as an HS256 JWT signed with k. The token is byte for byte
// what jwt.NewWithClaims(jwt.SigningMethodHS256, claims) with a "kid"
// header signed, written without the header map, reflection or
// intermediate strings. It writes into stack arrays by index: TinyGo moves
// any array given to append (or to a function returning it) to the heap.
func (k *Key) Sign(c *Claims) (string, error) {
	var pb [payloadBuf]byte
	n := putPayload(pb[:], 0, c)
	size := k.tokenSize(n)
	if n < 0 || size > tokenBuf || jwt.TimePrecision != time.Second {
		// Too long for the stack, or jwt set to write fractional seconds:
		// encoding/json writes the struct as jwt would have.
		enc, err := json.Marshal(c.registered())
		if err != nil {
			return "", err
		}
		return signed(k.token(make([]byte, k.tokenSize(len(enc))), enc))
	}
	var tb [tokenBuf]byte
	return signed(k.token(tb[:size], pb[:n]))
}

// signed turns token's "" (a miscounted size, which cannot happen) into an
// error rather than an empty cookie.
func signed(tok string) (string, error) {
	if tok == "" {
		return "", errors.New("sign: token size miscounted")
	}
	return tok, nil
}

// tokenSize is the room token needs for a payload of n bytes: a block left
// free for HMAC's inner pad (so the inner hash runs over one contiguous
// buffer), then header.payload.signature.
func (k *Key) tokenSize(n int) int {
	return sha256.BlockSize + len(k.header) + 1 + base64.RawURLEncoding.EncodedLen(n) + 1 + sigLen
}

// token writes the signed token for payload into t, which holds exactly
// tokenSize(len(payload)) bytes, and returns it.
func (k *Key) token(t []byte, payload []byte) string {
	i := put(t, sha256.BlockSize, k.header)
	i = put(t, i, ".")
	end := i + base64.RawURLEncoding.EncodedLen(len(payload))
	if i < 0 || end+1+sigLen != len(t) {
		return "" // unreachable with t sized by tokenSize; never index past it
	}
	base64.RawURLEncoding.Encode(t[i:end], payload)
	sum := k.macPadded(t[:end])
	t[end] = '.'
	base64.RawURLEncoding.Encode(t[end+1:], sum[:])
	// A Builder, not string(t): TinyGo would move the caller's stack
	// array to the heap for the conversion.
	var out strings.Builder
	out.Grow(len(t) - sha256.BlockSize)
	out.Write(t[sha256.BlockSize:])
	return out.String()
}

// sigLen is the length of an HS256 signature in base64url, unpadded.
const sigLen = (sha256.Size*8 + 5) / 6

// macPadded returns HMAC-SHA256 of b[BlockSize:], overwriting b[:BlockSize]
// with the inner pad. sha256.Sum256 keeps its state on the stack, which
// hmac.New (two digests and two pads on the heap) does not.
func (k *Key) macPadded(b []byte) [sha256.Size]byte {
	if len(b) < sha256.BlockSize {
		return [sha256.Size]byte{}
	}
	for i, c := range k.block {
		b[i] = c ^ 0x36
	}
	inner := sha256.Sum256(b)
	var outer [sha256.BlockSize + sha256.Size]byte
	for i, c := range k.block {
		outer[i] = c ^ 0x5c
	}
	copy(outer[sha256.BlockSize:], inner[:])
	return sha256.Sum256(outer[:])
}

// mac returns HMAC-SHA256 of msg.
func (k *Key) mac(msg string) [sha256.Size]byte {
	if len(msg) <= macInline {
		var b [sha256.BlockSize + macInline]byte
		n := copy(b[sha256.BlockSize:], msg)
		return k.macPadded(b[:sha256.BlockSize+n])
	}
	var sum [sha256.Size]byte
	h := hmac.New(sha256.New, k.secret)
	io.WriteString(h, msg)
	h.Sum(sum[:0])
	return sum
}

// SignedBy finds the key among keys whose header token carries and checks
// token's signature with it, without allocating. It is stricter than jwt:
// the header must be byte for byte the one Sign writes for one of keys,
// and the signature its canonical encoding; no token Sign wrote differs.
// It returns ErrMalformed, ErrUnknownKey or ErrBadSignature, unwrapped.
func SignedBy(keys []Key, token string) (*Key, error) {
	dot := strings.IndexByte(token, '.')
	last := strings.LastIndexByte(token, '.')
	if dot < 0 || last == dot || strings.IndexByte(token[dot+1:last], '.') >= 0 {
		return nil, ErrMalformed
	}
	var k *Key
	for i := range keys {
		if keys[i].header == token[:dot] {
			k = &keys[i]
			break
		}
	}
	if k == nil {
		return nil, ErrUnknownKey
	}
	sum := k.mac(token[:last])
	var want [sigLen]byte
	base64.RawURLEncoding.Encode(want[:], sum[:])
	sig := token[last+1:]
	if len(sig) != len(want) {
		return nil, ErrBadSignature
	}
	// Compare in constant time, as hmac.Equal does, without converting
	// the string to a slice.
	var diff byte
	for i := range want {
		diff |= want[i] ^ sig[i]
	}
	if diff != 0 {
		return nil, ErrBadSignature
	}
	return k, nil
}

// hs256Only is the one algorithm passes use; jwt only reads it.
var hs256Only = []string{"HS256"}

// Parse has jwt parse and validate token, signed by k (see SignedBy): HS256
// only, k's key id, an expiry after now, an issue time not after now
// (both with leeway), and, unless audience is "", audience among its
// audiences. Its errors are jwt's (errors.Is(err, jwt.ErrTokenExpired)
// holds for an expired token), or say what else is missing.
func (k *Key) Parse(token, audience string, now time.Time, leeway time.Duration) (Claims, error) {
	// The clock jwt reads is a copy made here: TinyGo moves a variable a
	// closure captures to the heap where it is declared, and refusing a
	// forged pass before calling Parse should not pay for that.
	at := now
	opts := [...]jwt.ParserOption{
		jwt.WithValidMethods(hs256Only),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(func() time.Time { return at }),
		nil, // the audience, when given
	}
	n := len(opts) - 1
	if audience != "" {
		opts[n], n = jwt.WithAudience(audience), n+1
	}
	var c jwtClaims
	_, err := jwt.NewParser(opts[:n]...).ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, ok := t.Header["kid"].(string)
		if !ok {
			return nil, errors.New("no key id")
		}
		if kid != k.id {
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		return k.secretAny, nil
	})
	if err != nil {
		return Claims{}, err
	}
	if c.IssuedAt == nil || c.ExpiresAt == nil {
		return Claims{}, errors.New("no issue or expiry time")
	}
	return c.plain(), nil
}
