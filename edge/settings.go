// What a sandbox reads and keeps: the config store's settings, read for
// each request and parsed again only when a value changed, and what the
// sandbox keeps between the requests it serves (Kept).

package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/heartbeat"
	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/templates"
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

// DefaultKeptFor is how long a reused sandbox trusts a secret or a template
// it has read: an operator's change to the secret or KV store takes effect
// within it.
const DefaultKeptFor = 5 * time.Second

// Kept is what one sandbox keeps between the requests it serves
// (fsthttp.ServeMany): the parsed settings and rooms, the signing keys, the
// templates, and what the secret and KV stores answered. Nothing in it is
// about a visitor; a request's own state lives in its request. The config
// store is read at every request and parsed again only when a value it
// read has changed, so a change there takes effect at the next request;
// secrets and templates are read again after For.
//
// A sandbox serves one request at a time, so Kept needs no lock.
type Kept struct {
	// For is how long secrets and templates are kept; 0 means
	// DefaultKeptFor.
	For time.Duration

	settings  *keptSettings
	secrets   map[string]kept[[]byte]
	templates map[string]kept[string]
	keys      *keptKeys
	parsed    map[string]keptTemplate // by page kind and template name
}

// kept is a store's answer, and when it was read.
type kept[T any] struct {
	v   T
	err error // nil or ErrNotFound: other failures are not kept
	at  time.Time
}

// keptSettings are settings and the config values they were made from, in
// the order LoadSettings read them.
type keptSettings struct {
	settings Settings
	reads    []configRead
}

// configRead is one value LoadSettings read; found is false for a missing
// key.
type configRead struct {
	key, v string
	found  bool
}

// keptKeys is a key set and the secret it was parsed from.
type keptKeys struct {
	raw  string
	keys *queue.KeySet
}

// keptTemplate is a parsed template and its source.
type keptTemplate struct {
	src string
	t   *templates.Template
}

func (k *Kept) keepFor() time.Duration {
	if k.For > 0 {
		return k.For
	}
	return DefaultKeptFor
}

// Settings returns LoadSettings(c), parsing again only when a value it
// read last time reads differently now. Settings that met a failure other
// than a missing key are not kept, so the next request tries again.
func (k *Kept) Settings(c Config) Settings {
	if ks := k.settings; ks != nil && ks.current(c) {
		return ks.settings
	}
	rec := &recordingConfig{c: c}
	s := LoadSettings(rec)
	k.settings = nil
	if !rec.failed {
		k.settings = &keptSettings{settings: s, reads: rec.reads}
	}
	return s
}

// current reports whether c still holds every value the settings were made
// from. LoadSettings reads the same keys as long as they hold the same
// values, so checking those keys is enough.
func (ks *keptSettings) current(c Config) bool {
	for _, r := range ks.reads {
		v, err := c.Get(r.key)
		switch {
		case errors.Is(err, ErrNotFound):
			if r.found {
				return false
			}
		case err != nil, !r.found, v != r.v:
			return false
		}
	}
	return true
}

// recordingConfig is a Config that notes what it answered.
type recordingConfig struct {
	c      Config
	reads  []configRead
	failed bool
}

func (r *recordingConfig) Get(key string) (string, error) {
	v, err := r.c.Get(key)
	switch {
	case err == nil:
		r.reads = append(r.reads, configRead{key: key, v: v, found: true})
	case errors.Is(err, ErrNotFound):
		r.reads = append(r.reads, configRead{key: key})
	default:
		r.failed = true
	}
	return v, err
}

// fresh reports whether e, read at e.at, may still be used at now.
func (k *Kept) fresh(at, now time.Time) bool {
	return !now.Before(at) && now.Sub(at) < k.keepFor()
}

// keptSecrets is a Secrets that answers from Kept while its answers are
// fresh.
type keptSecrets struct {
	k    *Kept
	from Secrets
	now  time.Time
}

func (s keptSecrets) Get(name string) ([]byte, error) {
	if e, ok := s.k.secrets[name]; ok && s.k.fresh(e.at, s.now) {
		return e.v, e.err
	}
	v, err := s.from.Get(name)
	if err == nil || errors.Is(err, ErrNotFound) {
		if s.k.secrets == nil {
			s.k.secrets = map[string]kept[[]byte]{}
		}
		s.k.secrets[name] = kept[[]byte]{v: v, err: err, at: s.now}
	}
	return v, err
}

// keptTemplates is a Templates that answers from Kept while its answers
// are fresh.
type keptTemplates struct {
	k    *Kept
	from Templates
	now  time.Time
}

func (t keptTemplates) Get(name string) (string, error) {
	if e, ok := t.k.templates[name]; ok && t.k.fresh(e.at, t.now) {
		return e.v, e.err
	}
	v, err := t.from.Get(name)
	if err == nil || errors.Is(err, ErrNotFound) {
		if t.k.templates == nil {
			t.k.templates = map[string]kept[string]{}
		}
		t.k.templates[name] = kept[string]{v: v, err: err, at: t.now}
	}
	return v, err
}

// keySet parses raw, or returns the key set parsed from the same raw last
// time.
func (k *Kept) keySet(raw string) (*queue.KeySet, error) {
	if k.keys != nil && k.keys.raw == raw {
		return k.keys.keys, nil
	}
	keys, err := queue.ParseKeySet(raw)
	if err != nil {
		return nil, err
	}
	k.keys = &keptKeys{raw: raw, keys: keys}
	return keys, nil
}

// parse parses src as the template called name of page kind, or returns
// what the same source parsed to last time.
func (k *Kept) parse(kind templates.Page, name, src string) (*templates.Template, error) {
	id := kind.Name + "\x00" + name
	if e, ok := k.parsed[id]; ok && e.src == src {
		return e.t, nil
	}
	t, err := kind.Parse(src)
	if err != nil {
		return nil, err
	}
	if k.parsed == nil {
		k.parsed = map[string]keptTemplate{}
	}
	k.parsed[id] = keptTemplate{src: src, t: t}
	return t, nil
}

// keep makes the request read the secret and KV stores through Kept.
func (q *request) keep() {
	q.secrets, q.templates = q.Secrets, q.Templates
	if q.Kept == nil {
		return
	}
	if q.Secrets != nil {
		q.secrets = keptSecrets{k: q.Kept, from: q.Secrets, now: q.now}
	}
	if q.Templates != nil {
		q.templates = keptTemplates{k: q.Kept, from: q.Templates, now: q.now}
	}
}

// loadSettings reads the config store, through Kept when there is one.
func (q *request) loadSettings() Settings {
	if q.Kept == nil {
		return LoadSettings(q.Config)
	}
	return q.Kept.Settings(q.Config)
}

// parseKeys parses the signing keys, through Kept when there is one.
func (h *Handler) parseKeys(raw string) (*queue.KeySet, error) {
	if h.Kept == nil {
		return queue.ParseKeySet(raw)
	}
	return h.Kept.keySet(raw)
}

// parseTemplate parses a template, through Kept when there is one.
func (h *Handler) parseTemplate(kind templates.Page, name, src string) (*templates.Template, error) {
	if h.Kept == nil {
		return kind.Parse(src)
	}
	return h.Kept.parse(kind, name, src)
}

// The config store keys that bound a reusable sandbox, read once when it
// starts (their defaults and ranges are package settings').
const (
	KeySandboxRequests = settings.KeySandboxRequests
	KeySandboxLifetime = settings.KeySandboxLifetime
)

// SandboxLimits bound the requests one sandbox serves (fsthttp.ServeMany):
// how many, and for how long after it started. Fastly may end a sandbox
// sooner.
type SandboxLimits struct {
	Requests int
	Lifetime time.Duration
}

// DefaultSandboxLimits are the limits of a sandbox whose config store sets
// none, in the build running (the TinyGo build's differ: see the table).
func DefaultSandboxLimits() SandboxLimits {
	requests := settings.Get(settings.Store[:], KeySandboxRequests)
	n := requests.Default
	if runtime.Compiler == "tinygo" {
		n = requests.TinyGoDefault
	}
	return SandboxLimits{Requests: int(n), Lifetime: settings.Seconds(settings.Get(settings.Store[:], KeySandboxLifetime).Default)}
}

// LoadSandboxLimits reads the sandbox limits from c, with def where c has
// none. A bad value falls back to def's, with a problem naming the key for
// the log; an unlinked store gives def quietly, as every request says what
// is missing.
func LoadSandboxLimits(c Config, def SandboxLimits) (SandboxLimits, []error) {
	rd := &settings.Reader{Source: c, NotFound: ErrNotFound}
	l := SandboxLimits{
		Requests: int(rd.NumberOr(KeySandboxRequests, float64(def.Requests))),
		Lifetime: settings.Seconds(rd.NumberOr(KeySandboxLifetime, def.Lifetime.Seconds())),
	}
	// Settings set under a name they had before are said here, once a
	// sandbox, rather than read again on every request.
	rd.OldNames()
	if errors.Is(rd.Failed, ErrStoreNotLinked) {
		return def, nil
	}
	return l, rd.Problems
}
