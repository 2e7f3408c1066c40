// Package settings is the one table of what an operator can set: every key
// of the config store and every field of a room, each with its type,
// default, range, unit and a line of documentation.
//
// The model: a setting is a name and a rule. The edge reads the config
// store through a Reader, which applies each key's default and range and
// records a problem naming the key, the value and the rule for every value
// it cannot use; package queue takes a room's defaults and ranges from
// the same table; wrconfig learns the keys from it, and docs/configuration.md
// and wrconfig's help are written from it (go generate ./settings).
//
// Durations are in seconds and their names carry no unit: a JSON number
// in a room, a decimal in the config store, with fractions where a setting
// allows them (Setting.Fraction). Names that broke the rule were renamed
// (Renames); an old name is a problem that names the new one.
//
// To add a setting: add its row here; read a config store key with a
// Reader in package edge (LoadSettings, or LoadSandboxLimits for what a
// sandbox reads once), or give a room setting its field in queue.Room,
// with the row's name as its JSON name (a number gets its default and
// range from the row through it); then make docs. The tests of package
// queue fail while a room's JSON fields and the table disagree, and name
// the numbers that reach the store (docs/development.md).
//
// The tables are arrays of literals, so the package computes nothing at
// start-up (TinyGo evaluates package variables at compile time).
package settings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

//go:generate go run ./gendoc -o ../docs/configuration.md

// Kind is the type of a setting's value.
type Kind uint8

// The kinds of value.
const (
	// Text is a string.
	Text Kind = iota
	// Bool is true or false.
	Bool
	// Int is a whole number.
	Int
	// Number is a number, fractions allowed.
	Number
	// Duration is a time in seconds: whole seconds unless Fraction is set.
	Duration
	// Path is a URL path the edge serves itself.
	Path
	// URL is an absolute URL.
	URL
	// List is a list of strings (in a room, a JSON array; the room index
	// is separated by commas or spaces).
	List
	// Object is a JSON object whose fields are documented where it is.
	Object
	// Time is an RFC 3339 time in UTC.
	Time
)

// String names the kind as the documentation does.
func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case Bool:
		return "true or false"
	case Int:
		return "a whole number"
	case Number:
		return "a number"
	case Duration:
		return "seconds"
	case Path:
		return "a path"
	case URL:
		return "a URL"
	case List:
		return "a list"
	case Object:
		return "a JSON object"
	case Time:
		return "a time (RFC 3339, UTC)"
	}
	return "?"
}

// Numeric reports whether a value of the kind is a number.
func (k Kind) Numeric() bool { return k == Int || k == Number || k == Duration }

// Setting is one row of the table.
type Setting struct {
	// Name is the config store key or the room's JSON field.
	Name string
	Kind Kind
	// Default is a numeric setting's value when it is left out.
	Default float64
	// DefaultText is a text setting's value when it is left out, or, for
	// any kind, how the documentation states a default the code derives
	// (e.g. "wr_<room>"); "" with a zero Default means none.
	DefaultText string
	// Min and Max bound a numeric setting (Ranged).
	Min, Max float64
	// Ranged is set when Min and Max apply.
	Ranged bool
	// Fraction allows a Duration fractions of a second.
	Fraction bool
	// Off, when set, says what 0 means (e.g. "no cap").
	Off string
	// Choices are the only values a text (or Int) setting takes, "" when
	// any value its checks accept is fine; separated by "|".
	Choices string
	// Unit is what a numeric value counts (seconds for a Duration).
	Unit string
	// TinyGoDefault, when set, is the default in the TinyGo build.
	TinyGoDefault float64
	// Override is set on a room setting an event may change.
	Override bool
	// Doc is one line: what the setting does.
	Doc string
}

// The config store's keys.
const (
	KeyRooms            = "rooms"
	KeyRoomPrefix       = "room."
	KeyAdminPath        = "admin_path"
	KeyAPIPath          = "api_path"
	KeyUpstashURL       = "upstash_url"
	KeyUpstashDatabases = "upstash_databases"
	KeyStoreTimeout     = "store_timeout"
	KeyHSTSMaxAge       = "hsts_max_age"
	KeyBypass           = "bypass"
	KeyLogEndpoint      = "log_endpoint"
	KeyLogClientIP      = "log_client_ip"
	KeySandboxRequests  = "sandbox_requests"
	KeySandboxLifetime  = "sandbox_lifetime"
)

// The defaults of the edge's own paths.
const (
	DefaultAdminPath = "/_wr/admin"
	DefaultAPIPath   = "/_wr/api"
)

// Store is every key of the config store (waiting_room_config). The room
// keys are KeyRoomPrefix followed by a room's name.
var Store = [...]Setting{
	{Name: KeyRooms, Kind: List, Doc: "The rooms, by name (a-z, 0-9, - and _), separated by commas or spaces; in this order they break ties between equally specific rooms."},
	{Name: KeyRoomPrefix + "<name>", Kind: Object, Doc: "A room's definition: the room settings below, as one JSON object."},
	{Name: KeyAdminPath, Kind: Path, DefaultText: DefaultAdminPath, Doc: "Where the admin panel is served: a path below /, in normal form."},
	{Name: KeyAPIPath, Kind: Path, DefaultText: DefaultAPIPath, Doc: "Where the admin API is served; off while it overlaps admin_path."},
	{Name: KeyUpstashURL, Kind: URL, Doc: "The Upstash database's REST URL; unset, the upstash backend says where the database is."},
	{Name: KeyUpstashDatabases, Kind: Int, Default: 1, Min: 1, Max: 8, Ranged: true, Unit: "databases",
		Doc: "How many Upstash databases carry the sharded rooms: shard i of a room is in database i mod this; database j above 0 is the backend upstash_<j> with the secret upstash_token_<j>."},
	{Name: KeyStoreTimeout, Kind: Duration, Fraction: true, Default: 1.5, Min: 0.05, Max: 30, Ranged: true, Unit: "seconds",
		Doc: "How long a store call may take before the room's on_store_error policy applies."},
	{Name: KeyHSTSMaxAge, Kind: Duration, Min: 0, Max: 63072000, Ranged: true, Unit: "seconds", Off: "off",
		Doc: "Adds Strict-Transport-Security with this max-age to protected rooms' answers over TLS (at most two years)."},
	{Name: KeyBypass, Kind: Object, Doc: "Global bypass rules, which let requests past every room's line: a JSON object of a room's bypass_* fields."},
	{Name: KeyLogEndpoint, Kind: Text, Doc: "The Fastly log endpoint for the structured log lines (one JSON line per request); unset, none are written."},
	{Name: KeyLogClientIP, Kind: Bool, DefaultText: "false", Doc: "Logs client addresses as they are rather than as keyed hashes."},
	// A reused sandbox is much cheaper than a fresh one in the Go build,
	// so it serves many. The TinyGo build serves few enough that a sandbox
	// ends before its 8 MiB heap fills (about forty queue pages), so it runs
	// no collection: TinyGo 0.33's collections cost tens to hundreds of
	// milliseconds and grow with what a sandbox has served, so a sandbox
	// that lives on to collect costs more per request than a fresh one
	// (BENCHMARKS.md, "Reusable sandboxes").
	{Name: KeySandboxRequests, Kind: Int, Default: 100, TinyGoDefault: 20, Min: 1, Max: 10000, Ranged: true, Unit: "requests",
		Doc: "How many requests one sandbox serves before it ends (1: none is reused); read when a sandbox starts."},
	{Name: KeySandboxLifetime, Kind: Duration, Default: 60, Min: 1, Max: 3600, Ranged: true, Unit: "seconds",
		Doc: "How long after it started a sandbox takes new requests; read when a sandbox starts."},
}

// Room is every field of a room's JSON definition.
var Room = [...]Setting{
	// Where the room applies (match.Target).
	{Name: "hosts", Kind: List, Doc: "The hosts the room applies to (any host when empty)."},
	{Name: "paths", Kind: List, Doc: "The path prefixes the room applies to."},
	{Name: "countries", Kind: List, Doc: "Only visitors from these countries (ISO 3166-1 alpha-2) wait."},
	{Name: "except_countries", Kind: List, Doc: "Visitors from these countries never wait."},
	{Name: "case_insensitive_paths", Kind: Bool, DefaultText: "false", Doc: "Matches paths and bypass_paths without regard to case."},
	// Who never waits (match.Bypass).
	{Name: "bypass_ips", Kind: List, Doc: "Client addresses or CIDR prefixes that never wait."},
	{Name: "bypass_acl", Kind: Text, Doc: "A Fastly ACL whose ALLOW entries never wait."},
	{Name: "bypass_paths", Kind: List, Doc: "Path prefixes that never wait (assets, health checks)."},
	{Name: "bypass_extensions", Kind: List, Doc: "File extensions that never wait (css, js...)."},
	{Name: "bypass_methods", Kind: List, Doc: "Request methods that never wait."},
	{Name: "bypass_headers", Kind: List, Doc: "Header rules ({name, value} or {name, secret}) whose requests never wait."},
	{Name: "bypass_cookies", Kind: List, Doc: "Cookies (name=value) whose requests never wait."},
	{Name: "bypass_verified_bots", Kind: Bool, DefaultText: "false", Doc: "Bots Fastly's bot detection verified never wait."},
	// The line.
	{Name: "mode", Kind: Text, DefaultText: "fifo", Choices: "fifo|random|passthrough|reject", Override: true,
		Doc: "How newcomers are treated: queued in order, queued in random order per window, let in at once, or shown the closed page."},
	{Name: "random_window", Kind: Duration, Default: 60, Min: 1, Max: 3600, Ranged: true, Unit: "seconds", Override: true,
		Doc: "In random mode, arrivals within one window are called in a random order."},
	{Name: "new_users_per_minute", Kind: Number, Min: 0, Max: 1e7, Ranged: true, Unit: "visitors per minute", Off: "no rate limit", Override: true,
		Doc: "The admission rate (0, or at least 0.01); set it, max_active_users or both."},
	{Name: "burst", Kind: Int, Default: 1, Min: 1, Max: 1e7, Ranged: true, Unit: "visitors", Override: true,
		Doc: "How many admissions may accumulate while the room is quiet."},
	{Name: "max_active_users", Kind: Int, Min: 0, Max: 1e7, Ranged: true, Unit: "visitors", Off: "no cap", Override: true,
		Doc: "The most visitors active on the origin at once."},
	{Name: "refresh", Kind: Duration, Default: 10, Min: 1, Max: 600, Ranged: true, Unit: "seconds",
		Doc: "How often the queue page polls its place (near the front, every 2 s)."},
	{Name: "queue_timeout", Kind: Duration, Default: 900, Min: 30, Max: 86400, Ranged: true, Unit: "seconds",
		Doc: "How long a waiting visitor keeps their place without polling (at least three refreshes)."},
	{Name: "claim_window", Kind: Duration, Default: 30, Min: 5, Max: 3600, Ranged: true, Unit: "seconds",
		Doc: "How long a called visitor's place is held for them (at least a refresh plus 5 s)."},
	{Name: "inactivity_timeout", Kind: Duration, Default: 90, Min: 10, Max: 86400, Ranged: true, Unit: "seconds",
		Doc: "A session with no request for this long ends, freeing its place."},
	{Name: "session_duration", Kind: Duration, Default: 300, Min: 10, Max: 86400, Ranged: true, Unit: "seconds",
		Doc: "The session cookie's lifetime, slid forward by activity (at least inactivity_timeout)."},
	{Name: "on_store_error", Kind: Text, DefaultText: "hold", Choices: "hold|open",
		Doc: "When the store cannot be reached: hold shows the busy page and keeps every place, open lets the request through."},
	{Name: "cookie_name", Kind: Text, DefaultText: "wr_<room>", Doc: "The cookie that carries the room's pass."},
	{Name: "queue_status_code", Kind: Int, Default: 200, Choices: "200|202|429|503", Override: true,
		Doc: "The HTTP status of the queue page."},
	{Name: "template", Kind: Text, DefaultText: "queue.html", Override: true,
		Doc: "The queue page template's name in the template store (a plain file name)."},
	{Name: "bind_session", Kind: Text, DefaultText: "user_agent", Choices: "none|user_agent|ip_prefix|ip_prefix+user_agent",
		Doc: "What the room's passes are tied to, so a copied cookie fails elsewhere."},
	{Name: "joins_per_ip_per_minute", Kind: Int, Default: 30, Min: 0, Max: 10000, Ranged: true, Unit: "joins per minute", Off: "off",
		Doc: "How often one client (an IPv4 address or IPv6 /64) may join the line in a minute."},
	// A /24 or /48 is an office, a campus or a carrier's NAT as often as
	// one attacker, and an autonomous system a whole ISP: both are off
	// unless the operator sizes them for the crowd (docs/security.md).
	{Name: "joins_per_network_per_minute", Kind: Int, Default: 0, Min: 0, Max: 1000000, Ranged: true, Unit: "joins per minute", Off: "off",
		Doc: "How often clients of one network (an IPv4 /24 or IPv6 /48) may join the line in a minute, together."},
	{Name: "joins_per_as_per_minute", Kind: Int, Default: 0, Min: 0, Max: 10000000, Ranged: true, Unit: "joins per minute", Off: "off",
		Doc: "How often clients of one autonomous system (Fastly's geolocation of the address) may join the line in a minute, together."},
	// 20 bits is about a million hashes: a few seconds of a phone's
	// browser at the top rung, and a blink at the rungs below (package
	// challenge). 24 would take a phone most of a minute.
	{Name: "proof_of_work", Kind: Int, Default: 0, Min: 0, Max: 24, Ranged: true, Unit: "bits", Off: "off",
		Doc: "The hardest proof of work a newcomer's browser does before it joins the line, asked as the line grows and of clients that join often; none while the line is calm. It also sets the room's decoy line: every waiting visitor's page does this much work once, in the background, as the decoy's way out (docs/security.md)."},
	// At 1 the priority lane could take every admission while others
	// wait, and the line would stall.
	{Name: "decoy_ips", Kind: List, Doc: "Client addresses or CIDR prefixes sent to the decoy line, in a room with a proof of work (docs/security.md)."},
	{Name: "decoy_acl", Kind: Text, Doc: "A Fastly ACL whose BLOCK entries are sent to the decoy line, in a room with a proof of work."},
	{Name: "decoy_bad_bots", Kind: Bool, DefaultText: "false", Doc: "Sends what Fastly's bot detection reports as a bot it did not verify to the decoy line, in a room with a proof of work."},
	{Name: "priority_share", Kind: Number, Default: 0.2, Min: 0, Max: 0.9, Ranged: true, Off: "no priority lane or invites",
		Doc: "The largest share of admissions the priority lane (invited visitors) takes while others wait."},
	{Name: "events", Kind: List, Doc: "Scheduled sales (the event settings below), in any order; they may not overlap."},
	// One shard's calls are what one database core takes; beyond that
	// a room runs as several lines (package store/shard). An operator's
	// action is a call per shard, and Fastly allows a request 32 backend
	// requests: 8 shards keep a room's stats and history (16 calls, 24
	// requests if every shard's database must be sent the script again)
	// within them.
	{Name: "shards", Kind: Int, Default: 1, Min: 1, Max: 8, Ranged: true, Unit: "shards",
		Doc: "How many lines (shards) the room runs as, each with its share of the rate and capacity, for crowds one database core cannot serve (docs/rooms.md)."},
	// How the pages look (queue.Look).
	{Name: "language", Kind: Text, DefaultText: "en", Choices: "en|de|fr|es|ja|pt",
		Doc: "The pages' language when the browser asks for none the room speaks."},
	{Name: "title", Kind: Text, Doc: "Heads the queue page (up to 120 characters); empty keeps the built-in heading."},
	{Name: "message", Kind: Text, Doc: "The operator's note on the queue page (up to 1000 characters)."},
	{Name: "logo_url", Kind: URL, Doc: "An image shown above the title: https:// or a path on the site (under a bypass rule)."},
	{Name: "brand_color", Kind: Text, DefaultText: "#1a56db", Doc: "The pages' accent colour (#rgb or #rrggbb)."},
	{Name: "background_color", Kind: Text, DefaultText: "#ffffff", Doc: "The pages' background colour (#rgb or #rrggbb)."},
	{Name: "support_link", Kind: URL, Doc: "Where a visitor can ask for help (https:// or mailto:)."},
	{Name: "texts", Kind: Object, Doc: "The operator's words per language: {\"de\": {\"title\": ...}}."},
	{Name: "cors_origins", Kind: List, Doc: "Origins (scheme://host[:port]) whose scripts may read the room's JSON answers with the visitor's credentials."},
	{Name: "leave_beacon", Kind: Bool, DefaultText: "false", Doc: "The heartbeat script ends the session when its page goes away, freeing the place at once."},
	// A snapshot older than a few seconds would show a visitor a stale
	// place for longer than a refresh.
	{Name: "snapshot_ttl", Kind: Duration, Fraction: true, Default: 1, Min: 0, Max: 10, Ranged: true, Unit: "seconds", Off: "ask the store at every poll",
		Doc: "How long a POP answers visitors far from the front from its snapshot of the line."},
}

// Event is every field of an event in a room's events.
var Event = [...]Setting{
	{Name: "name", Kind: Text, Doc: "The event's name (a-z, 0-9, - and _); with its schedule it keys the draw."},
	{Name: "prequeue_from", Kind: Time, DefaultText: "starts", Doc: "When arrivals start getting a countdown and a place in the pre-queue."},
	{Name: "starts", Kind: Time, Doc: "When the pre-queue is drawn and the sale opens (required)."},
	{Name: "ends", Kind: Time, Doc: "When the event's overrides stop applying (required, after starts)."},
	{Name: "overrides", Kind: Object, Doc: "Room settings that differ from the pre-queue to the end: the room settings marked as overridable."},
}

// Rename is a setting's old name.
type Rename struct {
	// Old is the name it had, New the name it has; Unit is the new
	// name's unit, when the old one had another.
	Old, New, Unit string
}

// Renames are the names settings had before the first release, when some
// durations were in milliseconds or named their unit.
var Renames = [...]Rename{
	{Old: "store_timeout_ms", New: KeyStoreTimeout, Unit: "seconds"},
	{Old: "sandbox_seconds", New: KeySandboxLifetime, Unit: "seconds"},
	{Old: "refresh_seconds", New: "refresh", Unit: "seconds"},
	{Old: "snapshot_ttl_ms", New: "snapshot_ttl", Unit: "seconds"},
}

// Renamed is the rename of old, if old is a setting's old name.
func Renamed(old string) (Rename, bool) {
	for _, r := range Renames {
		if r.Old == old {
			return r, true
		}
	}
	return Rename{}, false
}

// Problem is what an operator reads when they wrote the old name.
func (r Rename) Problem() string {
	s := r.Old + " was renamed " + r.New
	if r.Unit != "" {
		s += ", in " + r.Unit
	}
	return s
}

// Lookup finds the setting called name in table.
func Lookup(table []Setting, name string) (Setting, bool) {
	for _, s := range table {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// Get is the setting called name in table; it must be there (the tests of
// every package that calls it read each name it passes).
func Get(table []Setting, name string) Setting {
	s, _ := Lookup(table, name)
	return s
}

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
