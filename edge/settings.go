package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/heartbeat"
	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/urlnorm"
)

// ErrNotFound is what Config, Templates and Secrets return for a missing key,
// whatever store is behind them.
var ErrNotFound = errors.New("not found")

// Config reads the config store.
type Config interface {
	Get(key string) (string, error)
}

// Templates reads page templates from the KV store.
type Templates interface {
	Get(name string) (string, error)
}

// Secrets reads the secret store.
type Secrets interface {
	Get(name string) ([]byte, error)
}

// The names of the service's stores and of the keys in them (the config
// store's are package settings' table, named here for the edge's callers).
const (
	ConfigStore   = "waiting_room_config"
	TemplateStore = "waiting_room_templates"
	SecretStore   = "waiting_room_secrets"

	KeyRooms        = settings.KeyRooms
	KeyRoomPrefix   = settings.KeyRoomPrefix
	KeyAdminPath    = settings.KeyAdminPath
	KeyAPIPath      = settings.KeyAPIPath
	KeyUpstashURL   = settings.KeyUpstashURL // optional where Upstash is a Fastly backend
	KeyStoreTimeout = settings.KeyStoreTimeout
	KeyHSTSMaxAge   = settings.KeyHSTSMaxAge
	KeyBypass       = settings.KeyBypass

	SecretUpstashToken  = "upstash_token"
	SecretSigningKeys   = "signing_keys"
	SecretAdminPassword = "admin_password"
	SecretAPIToken      = "api_token"

	DefaultAdminPath = settings.DefaultAdminPath
	DefaultAPIPath   = settings.DefaultAPIPath
)

// Settings is everything the config store says, read once per request (a
// reused sandbox parses it again only when a value changed: Kept).
type Settings struct {
	AdminPath string
	// APIPath is where the admin API lives, or "" when it is off because
	// api_path and admin_path overlap (one would hide the other).
	APIPath string
	// UpstashURL is the config store's upstash_url, or "" when it has none
	// (then the upstash backend alone says where the database is).
	UpstashURL string
	// UpstashUnset, when set, says why upstash_url cannot be used: not a
	// URL, or a placeholder that was never replaced.
	UpstashUnset *SetupError
	// UpstashDatabases is how many Upstash databases carry the rooms'
	// shards (upstash_databases): shard i is in database i mod it.
	UpstashDatabases int
	// Unlinked, when set, says the config store cannot be opened at all, so
	// nothing can be decided and every request is refused.
	Unlinked     *SetupError
	StoreTimeout time.Duration
	// HSTSMaxAge (seconds; 0 = off) adds Strict-Transport-Security to
	// the answers of protected rooms over TLS.
	HSTSMaxAge int
	// Rooms are the valid rooms, in the index's order.
	Rooms []*queue.Room
	// Bypass is the global bypass rules (the config store's bypass key),
	// which let requests past every room's line; nil when there are none
	// or they are invalid. An invalid set is left out whole: the rules
	// meant to let requests through then let none through, which keeps
	// every room's line.
	Bypass *match.Bypass
	// RoomsBroken is true when the room index or a room definition could
	// not be used. Such a room is left out of Rooms, and requests that no
	// valid room claims are then refused rather than sent to the origin,
	// because the broken room may have been meant to protect them.
	RoomsBroken bool
	// LogEndpoint names the Fastly log endpoint for the structured lines
	// ("": none); LogClientIP logs client addresses unhashed.
	LogEndpoint string
	LogClientIP bool
	// Problems lists everything that was wrong, for the log.
	Problems []error
}

// LoadSettings reads and validates the config store, by package settings'
// table. Bad global values fall back to their defaults; every problem is
// returned for the log.
func LoadSettings(c Config) Settings {
	rd := &settings.Reader{Source: c, NotFound: ErrNotFound}
	var s Settings
	v, ok := rd.Value(KeyAdminPath)
	if errors.Is(rd.Failed, ErrStoreNotLinked) {
		// Every other read would fail the same way: say it once.
		s.AdminPath, s.APIPath = DefaultAdminPath, DefaultAPIPath
		s.StoreTimeout = settings.Seconds(settings.Get(settings.Store[:], KeyStoreTimeout).Default)
		s.Unlinked, s.RoomsBroken = storeNotLinked(ConfigStore, "fastly config-store list"), true
		return s
	}
	s.AdminPath = edgePath(rd, KeyAdminPath, DefaultAdminPath, v, ok)
	v, ok = rd.Value(KeyAPIPath)
	s.APIPath = edgePath(rd, KeyAPIPath, DefaultAPIPath, v, ok)
	if a, b := s.APIPath, s.AdminPath; a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/") {
		rd.Problems = append(rd.Problems, fmt.Errorf("%s: %q overlaps %s %q, so one would hide the other; the API is off until one of them moves", KeyAPIPath, a, KeyAdminPath, b))
		s.APIPath = ""
	}
	// upstash_url is optional; a bad one is a setup error, reported where
	// the store is needed rather than on every request.
	if v, ok := rd.Value(KeyUpstashURL); ok {
		s.UpstashURL, s.UpstashUnset = upstashURL(v)
	}
	s.StoreTimeout = rd.Duration(KeyStoreTimeout)
	s.UpstashDatabases = rd.Int(settings.KeyUpstashDatabases)
	s.HSTSMaxAge = rd.Int(KeyHSTSMaxAge)
	if v, ok := rd.Value(KeyBypass); ok {
		b, err := ParseBypass(v)
		if err != nil {
			rd.Problems = append(rd.Problems, err)
		}
		s.Bypass = b
	}
	loadLogSettings(rd, &s)
	s.RoomsBroken = loadRooms(c, &s.Rooms, &rd.Problems)
	s.Problems = rd.Problems
	return s
}

// loadRooms reads the room index and each room it lists into rooms, and
// reports whether any could not be used (problems says why).
func loadRooms(c Config, rooms *[]*queue.Room, problems *[]error) (broken bool) {
	index, err := c.Get(KeyRooms)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			*problems = append(*problems, fmt.Errorf("%s: %v", KeyRooms, err))
			return true
		}
		return false
	}
	names, err := queue.ParseRoomIndex(index)
	if err != nil {
		*problems = append(*problems, err)
		return true
	}
	for _, name := range names {
		raw, err := c.Get(KeyRoomPrefix + name)
		if err != nil {
			*problems = append(*problems, fmt.Errorf("%w: room %q: %s%s: %v", queue.ErrInvalidRoom, name, KeyRoomPrefix, name, err))
			broken = true
			continue
		}
		r, err := queue.ParseRoom(name, []byte(raw))
		if err != nil {
			*problems = append(*problems, err)
			broken = true
			continue
		}
		*rooms = append(*rooms, r)
	}
	return broken
}

// edgePath is the value v (ok: read) of key, a path the edge serves
// itself (admin_path, api_path), when checkEdgePath accepts it, else def
// with a problem naming the value and the rule.
func edgePath(rd *settings.Reader, key, def, v string, ok bool) string {
	if !ok {
		return def
	}
	problem := checkEdgePath(v, def)
	if problem == "" {
		return strings.TrimSuffix(v, "/")
	}
	rd.Problems = append(rd.Problems, fmt.Errorf("%s: %q %s; using %s", key, v, problem, def))
	return def
}

// checkEdgePath says why v cannot be the path of one of the edge's own
// surfaces (the admin panel, the API; example is its default), or "".
// The surface answers every path below it, so it must be a real path
// below "/" ("/" or "//" would make the whole site the panel), in the
// normal form requests are matched in (no dot segments, no repeated
// slashes), of A-Z, a-z, 0-9, "-", ".", "_", "~" and "/" only (nothing to
// escape, no query), and must not hold the edge's own paths (ownPaths).
func checkEdgePath(v, example string) string {
	p := strings.TrimSuffix(v, "/")
	if !strings.HasPrefix(p, "/") || len(p) < 2 {
		return "must be a path below /, like " + example
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/", c) >= 0) {
			return "may only hold A-Z, a-z, 0-9, -, ., _, ~ and /"
		}
	}
	if n, err := urlnorm.ParsePath(p); err != nil || n.Escaped != p || strings.HasSuffix(p, "/") {
		return "must be in normal form (no empty, . or .. segments)"
	}
	if own := ownPathHeld(p); own != "" {
		return "must not hold " + own
	}
	return ""
}

// ownPaths are the edge's own fixed paths, which Route serves before any
// admin_path, api_path or room.
var ownPaths = [...]struct{ path, what string }{
	{LeavePath, "the departure beacon's path"},
	{InvitePath, "the invite links' path"},
	{heartbeat.Path, "the heartbeat's path"},
	{heartbeat.ScriptPath, "the heartbeat script's path"},
}

// ownPathHeld names the edge's own path that a surface at p (answering p
// and every path below it) would hold, or is "".
func ownPathHeld(p string) string {
	for _, own := range ownPaths {
		if own.path == p || strings.HasPrefix(own.path, p+"/") {
			return own.path + ", " + own.what
		}
	}
	return ""
}

// ParseBypass reads the config store's global bypass rules: a JSON object
// of a room's bypass_* fields. Every error names the field, after "bypass."
// ("bypass.bypass_ips[1]: ..."); then the rules are nil.
func ParseBypass(v string) (*match.Bypass, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	b := &match.Bypass{}
	if err := dec.Decode(b); err != nil {
		return nil, fmt.Errorf("%s: %s", KeyBypass, jsonProblem(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: unexpected data after the JSON object", KeyBypass)
	}
	if err := b.Compile(false); err != nil {
		return nil, fmt.Errorf("%s.%v", KeyBypass, err)
	}
	return b, nil
}

// jsonProblem says what is wrong with a JSON value in an operator's words:
// which field holds the wrong type, or which field is unknown.
func jsonProblem(err error) string {
	var typ *json.UnmarshalTypeError
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%s: must be %s, not a JSON %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("must be a JSON object of bypass_* fields, not a JSON %s", typ.Value)
	case errors.As(err, &syntax):
		return fmt.Sprintf("is not valid JSON (at byte %d): %v", syntax.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") +
			" (the global rules are bypass_ips, bypass_acl, bypass_paths, bypass_extensions, bypass_methods, bypass_headers, bypass_cookies and bypass_verified_bots)"
	case errors.Is(err, io.EOF):
		return "is empty: write {} for no rules, or delete the key"
	}
	return err.Error()
}

// jsonKind names a Go kind as JSON calls it.
func jsonKind(kind string) string {
	switch kind {
	case "slice", "array":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}
