package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
)

// ErrInvalidRoom is wrapped by every error ParseRoom returns, so a caller
// can tell a bad room definition from a failure to read one.
var ErrInvalidRoom = errors.New("invalid room")

// Room is one protected part of a site, with its own line and limits.
// Rooms are defined as JSON in the config store, one key per room.
type Room struct {
	// Name identifies the room in store keys, cookies and the admin panel.
	Name string `json:"-"`
	// Target is where the room applies: hosts, paths, countries and
	// case_insensitive_paths (its JSON fields are the room's).
	match.Target
	// Bypass is the room's rules for requests that never wait (assets,
	// health checks...): a visitor's page should not queue its own
	// stylesheet. Its JSON fields (bypass_*) are the room's.
	match.Bypass
	// Mode is how the room treats newcomers: Fifo, Random, Passthrough or
	// Reject.
	Mode Mode `json:"mode"`
	// RandomWindow (seconds) groups arrivals for Random mode: visitors who
	// arrive within the same window are called in a random order.
	RandomWindow int `json:"random_window"`
	// NewUsersPerMinute is the admission rate; 0 means no rate limit.
	NewUsersPerMinute float64 `json:"new_users_per_minute"`
	// Burst is how many admissions may accumulate while the room is quiet.
	Burst int `json:"burst"`
	// MaxActiveUsers caps the visitors active on the origin at once; 0
	// means no cap. At least one of it and NewUsersPerMinute is set.
	MaxActiveUsers int `json:"max_active_users"`
	// RefreshSeconds (refresh) is how often the queue page polls its
	// place.
	RefreshSeconds int `json:"refresh"`
	// QueueTimeout (seconds) is how long a waiting visitor keeps their
	// place without polling.
	QueueTimeout int `json:"queue_timeout"`
	// ClaimWindow (seconds) is how long a called visitor's place is held
	// for them before it goes to the next in line.
	ClaimWindow int `json:"claim_window"`
	// InactivityTimeout (seconds) ends a session whose visitor has made no
	// request for this long, freeing the place.
	InactivityTimeout int `json:"inactivity_timeout"`
	// SessionDuration (seconds) is the lifetime of the session cookie,
	// slid forward by activity: a visitor back within it whose session
	// lapsed is a newcomer, who joins the line (and is let in at once
	// while the room admits and nobody waits).
	SessionDuration int `json:"session_duration"`
	// OnStoreError is what happens when the store cannot be reached.
	OnStoreError StoreErrorPolicy `json:"on_store_error"`
	// CookieName is the cookie that carries the room's pass.
	CookieName string `json:"cookie_name"`
	// QueueStatusCode is the HTTP status of the queue page.
	QueueStatusCode int `json:"queue_status_code"`
	// Template is the name of the queue page template.
	Template string `json:"template"`
	// BindSession is what the room's passes are tied to, so that a copied
	// cookie does not work on another client (see BindMode).
	BindSession BindMode `json:"bind_session"`
	// JoinsPerIPPerMinute caps how often one client (an IPv4 address or
	// an IPv6 /64) may join the line in a minute, counted with Fastly's
	// Edge Rate Limiting; 0 turns the cap off.
	JoinsPerIPPerMinute int `json:"joins_per_ip_per_minute"`
	// JoinsPerNetworkPerMinute caps the joins of one network (an IPv4
	// /24 or IPv6 /48) in a minute, all its clients together; 0 turns it
	// off.
	JoinsPerNetworkPerMinute int `json:"joins_per_network_per_minute"`
	// JoinsPerASPerMinute caps the joins of one autonomous system
	// (Fastly's geolocation of the client's address) in a minute; 0 turns
	// it off.
	JoinsPerASPerMinute int `json:"joins_per_as_per_minute"`
	// ProofOfWork (bits) is the top of the room's challenge ladder (see
	// package challenge): the most work a newcomer does before joining;
	// 0 asks none.
	ProofOfWork int `json:"proof_of_work"`
	// Decoy is the operator's rules for clients to send to the room's
	// decoy line (decoy.go; its JSON fields, decoy_*, are the room's).
	match.Decoy
	// DecoyBadBots sends to the decoy line what Fastly's bot detection
	// reports as a bot it did not verify (other than an accessibility
	// tool).
	DecoyBadBots bool `json:"decoy_bad_bots"`
	// PriorityShare is the largest share of admissions the priority lane
	// (invited visitors: see Invite) takes while others wait; 0 turns the
	// lane and its invites off.
	PriorityShare float64 `json:"priority_share"`
	// Events are the room's scheduled sales (see Event), kept in time
	// order; they may not overlap.
	Events []Event `json:"events"`
	// Look is the visitor pages' language and branding (its JSON fields
	// are the room's).
	Look
	// CORSOrigins are the origins (scheme://host[:port]) of other sites
	// whose scripts may read the room's JSON answers with the visitor's
	// credentials.
	CORSOrigins []string `json:"cors_origins"`
	// LeaveBeacon makes the edge's heartbeat script end the visitor's
	// session when its page goes away (pagehide), freeing the place at
	// once; off, a silent departure frees it at the inactivity timeout.
	LeaveBeacon bool `json:"leave_beacon"`
	// SnapshotTTLSeconds (snapshot_ttl) is how long a POP answers waiting
	// visitors far from the front from its snapshot of the line (see
	// Snapshot) before asking the store again; 0 asks the store at every
	// poll.
	SnapshotTTLSeconds float64 `json:"snapshot_ttl"`
	// Shards is how many lines the room runs as (see package store/shard):
	// each takes its share of the rate, burst and capacity, and a visitor
	// stays in the shard their arrival was hashed to.
	Shards int `json:"shards"`

	// event is the event a room returned by At is in.
	event *Event
}

// Mode is how a room treats newcomers: the store applies it (an
// operator's live mode replaces it there), so it is the store's type.
type Mode = store.Mode

// The room modes.
const (
	// Fifo queues visitors and admits them in arrival order.
	Fifo = store.Fifo
	// Random queues visitors and admits those who arrived within the same
	// window in a random order: arriving a second earlier than others (a
	// bot's advantage) buys nothing, and nobody waits behind a later window.
	Random = store.Random
	// Passthrough admits everyone at once, but counts them as sessions.
	Passthrough = store.Passthrough
	// Reject serves a static "closed" page to everyone without a session.
	Reject = store.Reject
)

// StoreErrorPolicy is what a room does when its store cannot be reached.
type StoreErrorPolicy string

// The store error policies.
const (
	// Hold shows the busy page, with Retry-After, and keeps everyone's place.
	Hold StoreErrorPolicy = "hold"
	// Open admits the request and marks it with a header the origin sees.
	Open StoreErrorPolicy = "open"
)

// unset marks a number left out of a room definition, so that it takes the
// table's default even where 0 is a value an operator may set.
const unset = -1 << 30

// number is one of the room's numeric settings: its name in package
// settings' table, and the field that holds it (an int or a float64).
type number struct {
	name  string
	field reflect.Value
}

func (n number) get() float64 {
	if n.field.Kind() == reflect.Int {
		return float64(n.field.Int())
	}
	return n.field.Float()
}

func (n number) set(v float64) {
	if n.field.Kind() == reflect.Int {
		n.field.SetInt(int64(v))
	} else {
		n.field.SetFloat(v)
	}
}

// numberField is where Room holds one numeric setting.
type numberField struct {
	index int
	name  string
}

// The fields of Room's numeric settings, found at first use
// (numberFields).
var (
	numberFieldsOnce  sync.Once
	numberFieldsFound []numberField
)

// numberFields are Room's numeric settings: every exported int or float64
// field whose JSON name is a numeric row of package settings' table. They are
// found by the JSON names so that a new numeric setting is its row and
// its field, and takes its default and range from the row with no list
// to keep; found once, because reading a struct's fields allocates.
func numberFields() []numberField {
	numberFieldsOnce.Do(func() {
		t := reflect.TypeOf(Room{})
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			s, ok := settings.Lookup(settings.Room[:], name)
			// Only an exported field can be set through reflect (an
			// unexported one would panic); the table's test names any
			// numeric row left without a field here.
			if ok && s.Kind.Numeric() && f.PkgPath == "" && (f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Float64) {
				numberFieldsFound = append(numberFieldsFound, numberField{index: i, name: name})
			}
		}
	})
	return numberFieldsFound
}

// number is r's numeric setting held in f.
func (r *Room) number(f numberField) number {
	return number{name: f.name, field: reflect.ValueOf(r).Elem().Field(f.index)}
}

// checkChoice checks a value of a setting the table gives choices (mode,
// on_store_error, bind_session), in the words of the table.
func checkChoice(name, got string) error {
	choices := settings.Get(settings.Room[:], name).Choices
	for rest := choices; rest != ""; {
		var c string
		if c, rest, _ = strings.Cut(rest, "|"); c == got {
			return nil
		}
	}
	return choiceError(name, choices, strconv.Quote(got))
}

// checkChoiceInt is checkChoice for a number (queue_status_code).
func checkChoiceInt(name string, got int) error {
	choices := settings.Get(settings.Room[:], name).Choices
	for rest := choices; rest != ""; {
		var c string
		c, rest, _ = strings.Cut(rest, "|")
		if n, err := strconv.Atoi(c); err == nil && n == got {
			return nil
		}
	}
	return choiceError(name, choices, strconv.Itoa(got))
}

func choiceError(name, choices, got string) error {
	list := strings.Split(choices, "|")
	return fmt.Errorf("%s: must be %s or %s, got %s", name, strings.Join(list[:len(list)-1], ", "), list[len(list)-1], got)
}

// ParseRoom decodes and validates one room definition, with the defaults
// and ranges of package settings' table. Every error names the room and
// the offending field, so an operator can fix it from the log; a field
// that was renamed is named with its new name.
func ParseRoom(name string, data []byte) (*Room, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("%w: room name %q: %v", ErrInvalidRoom, name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	r := &Room{}
	for _, f := range numberFields() {
		r.number(f).set(unset)
	}
	if err := dec.Decode(r); err != nil {
		return nil, fmt.Errorf("%w: room %q: %v", ErrInvalidRoom, name, renamed(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: room %q: unexpected data after the JSON object", ErrInvalidRoom, name)
	}
	r.Name = name
	r.applyDefaults()
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%w: room %q: %v", ErrInvalidRoom, name, err)
	}
	return r, nil
}

// renamed is err, or, when err is the decoder's refusal of a field that
// was renamed, what its new name is.
func renamed(err error) error {
	field, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return err
	}
	if rn, ok := settings.Renamed(strings.Trim(field, `"`)); ok {
		return errors.New(rn.Problem())
	}
	return err
}

// applyDefaults gives each setting left out its default. A number 0 that
// its range refuses is taken as left out too, as it always was.
func (r *Room) applyDefaults() {
	for _, f := range numberFields() {
		n := r.number(f)
		s := settings.Get(settings.Room[:], n.name)
		if v := n.get(); v == unset || v == 0 && s.Ranged && s.Min > 0 || v == 0 && s.Choices != "" {
			n.set(s.Default)
		}
	}
	if r.Mode == "" {
		r.Mode = Mode(roomDefault("mode"))
	}
	if r.OnStoreError == "" {
		r.OnStoreError = StoreErrorPolicy(roomDefault("on_store_error"))
	}
	if r.Template == "" {
		r.Template = roomDefault("template")
	}
	if r.CookieName == "" {
		r.CookieName = "wr_" + r.Name
	}
	if r.BindSession == "" {
		r.BindSession = BindMode(roomDefault("bind_session"))
	}
}

// limitsJoins reports whether room limits joins by any scope.
func (r *Room) limitsJoins() bool {
	return r.JoinsPerIPPerMinute > 0 || r.JoinsPerNetworkPerMinute > 0 || r.JoinsPerASPerMinute > 0
}

func roomDefault(name string) string { return settings.Get(settings.Room[:], name).DefaultText }

// CheckMode checks a live mode an operator sets against the modes a
// room's config may have.
func CheckMode(m string) error { return checkChoice("mode", m) }

// CheckLimit checks a value of the room's admission limits
// (new_users_per_minute, max_active_users or burst) against the bounds a
// room's config has, which an operator's live value must keep too.
func CheckLimit(field string, v float64) error {
	if field != "new_users_per_minute" && field != "max_active_users" && field != "burst" {
		return fmt.Errorf("%s: not an admission limit", field)
	}
	if err := settings.Get(settings.Room[:], field).Check(v); err != nil {
		return err
	}
	if field == "new_users_per_minute" && v > 0 && v < 0.01 {
		return fmt.Errorf("new_users_per_minute: must be 0 (no rate limit) or at least 0.01, got %g", v)
	}
	return nil
}

func (r *Room) validate() error {
	if err := r.Target.Compile(); err != nil {
		return err
	}
	if err := r.Bypass.Compile(r.CaseInsensitivePaths); err != nil {
		return err
	}
	if err := r.Decoy.Compile(); err != nil {
		return err
	}
	for _, c := range [...][2]string{{"mode", string(r.Mode)}, {"on_store_error", string(r.OnStoreError)}, {"bind_session", string(r.BindSession)}} {
		if err := checkChoice(c[0], c[1]); err != nil {
			return err
		}
	}
	if err := checkChoiceInt("queue_status_code", r.QueueStatusCode); err != nil {
		return err
	}
	if r.NewUsersPerMinute == 0 && r.MaxActiveUsers == 0 && (r.Mode == Fifo || r.Mode == Random) {
		return errors.New("new_users_per_minute or max_active_users: set at least one, or nobody is ever admitted")
	}
	for _, f := range numberFields() {
		n := r.number(f)
		if err := settings.Get(settings.Room[:], n.name).Check(n.get()); err != nil {
			return err
		}
	}
	if err := CheckLimit("new_users_per_minute", r.NewUsersPerMinute); err != nil {
		return err
	}
	if r.QueueTimeout < 3*r.RefreshSeconds {
		return fmt.Errorf("queue_timeout: %d is shorter than three refreshes (%d s): waiting visitors would lose their place between polls",
			r.QueueTimeout, 3*r.RefreshSeconds)
	}
	if r.ClaimWindow < r.RefreshSeconds+5 {
		return fmt.Errorf("claim_window: %d is shorter than a refresh plus 5 s (%d s): a called visitor could miss their turn between polls",
			r.ClaimWindow, r.RefreshSeconds+5)
	}
	if r.SessionDuration < r.InactivityTimeout {
		return fmt.Errorf("session_duration: %d is shorter than inactivity_timeout (%d)", r.SessionDuration, r.InactivityTimeout)
	}
	if err := checkToken(r.CookieName); err != nil {
		return fmt.Errorf("cookie_name: %q %v", r.CookieName, err)
	}
	if strings.ContainsAny(r.Template, "/\\") || strings.HasPrefix(r.Template, ".") {
		return fmt.Errorf("template: %q must be a plain file name", r.Template)
	}
	if err := r.Look.validate(); err != nil {
		return err
	}
	if err := r.validateCORS(); err != nil {
		return err
	}
	if err := r.validateShards(); err != nil {
		return err
	}
	return r.validateEvents()
}

// validateShards refuses a sharded room whose shares would leave a shard
// without a place, and one with events: each shard would draw its own
// pre-queue with its own key, which is not one draw.
func (r *Room) validateShards() error {
	switch {
	case r.Shards <= 1:
		return nil
	case r.MaxActiveUsers > 0 && r.MaxActiveUsers < r.Shards:
		return fmt.Errorf("shards: %d shards need max_active_users of at least %d (one place each), got %d",
			r.Shards, r.Shards, r.MaxActiveUsers)
	case len(r.Events) > 0:
		return fmt.Errorf("shards: a room of %d shards cannot hold events (each shard would draw its pre-queue apart); use one shard", r.Shards)
	}
	return nil
}

// checkName keeps room names safe to embed in store keys, cookie names
// and URLs without escaping.
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("must be 1 to 64 characters")
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return errors.New("may only hold a-z, 0-9, - and _")
		}
	}
	return nil
}

func checkToken(s string) error {
	if s == "" || len(s) > 64 {
		return errors.New("must be 1 to 64 characters")
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, c) {
			return errors.New("is not a valid cookie name")
		}
	}
	return nil
}

// Policy is the admission policy the store enforces for this room at now:
// during an event, with its overrides and the event itself. Every store
// call for a room passes it, so that no call flips the calling order or
// the event between calls.
func (r *Room) Policy(now time.Time) store.Policy {
	r = r.At(now)
	return store.Policy{
		Mode:         r.Mode,
		RandomWindow: seconds(r.RandomWindow),
		PerMinute:    r.NewUsersPerMinute, Burst: r.Burst, Capacity: r.MaxActiveUsers, PriorityShare: r.PriorityShare,
		ClaimWindow:  seconds(r.ClaimWindow),
		SessionTTL:   seconds(r.InactivityTimeout),
		QueueTimeout: seconds(r.QueueTimeout),
		CatchUp:      seconds(r.RefreshSeconds),
		Heartbeat:    r.Heartbeat(),
		Event:        r.storeEvent(),
		Shards:       r.Shards,
	}
}

// shards is how many lines the room runs as: at least one.
func (r *Room) shards() int { return max(r.Shards, 1) }

// HasShard reports whether the room runs a shard numbered i: a pass of a
// shard it no longer has (its shards were lowered) holds no place.
func (r *Room) HasShard(i int) bool { return i >= 0 && i < r.shards() }

// FastPoll is how often a visitor near the front of the line polls.
const FastPoll = 2 * time.Second

// PollEvery is how long a waiting visitor with ahead tickets before them
// waits before polling again. Near the front (within about one refresh's
// worth of admissions, or 5% of the capacity) it is FastPoll: a called
// visitor then arrives within seconds instead of a whole refresh later, so
// a called place stands empty briefly and the origin stays full.
func (r *Room) PollEvery(ahead int64) time.Duration {
	every := seconds(r.RefreshSeconds)
	if ahead < zone(r) && every > FastPoll {
		return FastPoll
	}
	return every
}

// zone is how many tickets from the front a visitor polls at FastPoll.
func zone(r *Room) int64 {
	zone := int64(5)
	if n := int64(r.MaxActiveUsers / 20); n > zone {
		zone = n
	}
	if n := int64(r.NewUsersPerMinute * float64(r.RefreshSeconds) / 60); n > zone {
		zone = n
	}
	return zone
}

// Heartbeat is how often an active session renews its place in the store:
// a third of the inactivity timeout, so an active visitor never lapses.
func (r *Room) Heartbeat() time.Duration { return seconds(r.InactivityTimeout) / 3 }

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// Rules are the room's rules as matching sees them (match.Judge).
func (r *Room) Rules() (name string, where *match.Target, skip *match.Bypass) {
	return r.Name, &r.Target, &r.Bypass
}

// ParseRoomIndex splits the config store's list of room names, separated
// by commas or white space, and checks each name.
func ParseRoomIndex(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r' })
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if err := checkName(f); err != nil {
			return nil, fmt.Errorf("%w: rooms: %q %v", ErrInvalidRoom, f, err)
		}
		if seen[f] {
			return nil, fmt.Errorf("%w: rooms: %q is listed twice", ErrInvalidRoom, f)
		}
		seen[f] = true
	}
	return fields, nil
}

// MaxCORSOrigins bounds a room's cors_origins: the edge compares a
// request's Origin with each of them, and a list longer than this is a
// sign that a wildcard was meant, which the room refuses on purpose.
const MaxCORSOrigins = 16

// maxOriginLen bounds one origin: a scheme, a host name of at most 253
// characters and a port.
const maxOriginLen = 8 + 253 + 6

// validateCORS checks cors_origins: each an origin exactly as a browser
// sends it in its Origin header (lower case, no path, no default port),
// since the edge compares them byte for byte and an origin written
// otherwise would silently never match.
func (r *Room) validateCORS() error {
	if len(r.CORSOrigins) > MaxCORSOrigins {
		return fmt.Errorf("cors_origins: at most %d origins, got %d", MaxCORSOrigins, len(r.CORSOrigins))
	}
	seen := make(map[string]bool, len(r.CORSOrigins))
	for i, o := range r.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("cors_origins[%d]: %q %v", i, o, err)
		}
		if seen[o] {
			return fmt.Errorf("cors_origins[%d]: %q is listed twice", i, o)
		}
		seen[o] = true
	}
	return nil
}

// AllowsOrigin reports whether scripts on origin (a request's Origin
// header) may read the room's answers.
func (r *Room) AllowsOrigin(origin string) bool {
	for _, o := range r.CORSOrigins {
		if o == origin {
			return true
		}
	}
	return false
}

// checkOrigin accepts scheme://host[:port] as a browser writes it.
func checkOrigin(o string) error {
	if len(o) > maxOriginLen {
		return fmt.Errorf("is longer than %d characters", maxOriginLen)
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || scheme != "https" && scheme != "http" {
		return errors.New("must begin with https:// or http://")
	}
	if strings.ContainsRune(rest, '*') {
		return errors.New("may not hold a wildcard: list each origin")
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return errors.New("must be scheme://host[:port] with no path, query or fragment (browsers send the origin without one)")
	}
	if strings.ContainsRune(rest, '@') {
		return errors.New("may not hold a user name")
	}
	host, port, hasPort := rest, "", false
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.HasSuffix(rest, "]") {
		host, port, hasPort = rest[:i], rest[i+1:], true
	}
	if err := checkOriginHost(host); err != nil {
		return err
	}
	if !hasPort {
		return nil
	}
	n, err := strconv.Atoi(port)
	switch {
	case err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+':
		return errors.New("has a port that is not a number from 1 to 65535")
	case scheme == "https" && n == 443 || scheme == "http" && n == 80:
		return fmt.Errorf("names the default port %d, which browsers leave out of the origin: drop it", n)
	}
	return nil
}

// checkOriginHost accepts a lower-case host name or a bracketed IPv6
// address.
func checkOriginHost(host string) error {
	if host == "" {
		return errors.New("has no host")
	}
	if host[0] == '[' {
		if len(host) < 3 || host[len(host)-1] != ']' || strings.Trim(host[1:len(host)-1], "0123456789abcdef:.") != "" {
			return errors.New("has an IPv6 address that is not lower-case hex in brackets")
		}
		return nil
	}
	if strings.HasSuffix(host, ".") || strings.HasPrefix(host, ".") || strings.Contains(host, "..") {
		return errors.New("has an empty label in its host name")
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return fmt.Errorf("has %q in its host name: write the host in lower case (punycode for other letters), as browsers send it", c)
		}
	}
	return nil
}
