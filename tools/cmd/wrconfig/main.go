// Command wrconfig checks the waiting room's configuration and explains
// what it does with a request, with the edge's own code (edge.LoadSettings
// and Settings.Route, over queue.ParseRoom and match.Judge),
// so it never disagrees with the edge.
//
//	wrconfig check [-previous file] <file|->
//	wrconfig explain [-config file] <host> <path> [--ip A] [--country CC] [--method M]
//	        [--header 'Name: value'] [--cookie name=value] [--verified-bot]
//	        [--acl name=ACTION] [--secret name=value]
//
// A config file holds the config store's keys as one JSON object, as
// devconfig.json does ({"rooms": "shop", "room.shop": "{...}"}; a room or
// the bypass key may also be given as a JSON object rather than a string
// holding one), or the list `fastly config-store-entry list --json` prints
// ([{"item_key": ..., "item_value": ...}]).
//
// check prints every problem, with its room and field, and exits 1 when
// there is one. Given the config deployed now (-previous), it also warns
// of an event scheduled again under a name it had: the store takes it for
// a new event, with a pre-queue and draw key of its own. explain prints where the request goes (the line, a bypass,
// the origin...), which room and rule decide it, and why.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/urlnorm"
)

const usage = `usage:
  wrconfig check [-previous file] <file|->
      checks a config (the config store's keys as a JSON object, as devconfig.json;
      - reads it from standard input) and prints every problem; exit status 1 if any.
      -previous names the config deployed now: an event it has that the new config
      schedules again under the same name is a new event, and is warned of
  wrconfig explain [-config file] <host> <path> [flags]
      prints where the edge sends a request for host and path, which room and rule
      decide it, and why (-config defaults to devconfig.json). Flags say what the
      platform would know of the request:
        --ip A               the client's address
        --country CC         its country (ISO 3166-1 alpha-2); unknown when left out
        --method M           the method (GET)
        --header 'Name: v'   a request header (repeatable)
        --cookie name=value  a cookie (repeatable)
        --verified-bot       bot detection verified it as a known bot
        --acl name=ACTION    the action of the entry of ACL name matching the address (repeatable)
        --secret name=value  a secret store value, for bypass_headers secrets (repeatable)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the command: args without the program name; it returns the exit
// status (0 fine, 1 a problem found or a file unreadable, 2 bad usage).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "check":
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		previous := fs.String("previous", "", "")
		if fs.Parse(args[1:]) != nil || fs.NArg() != 1 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		return check(fs.Arg(0), *previous, stdin, stdout, stderr)
	case "explain":
		return explain(args[1:], stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		writeKeys(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "wrconfig: unknown command %q\n%s", args[0], usage)
	return 2
}

// config is a config store read from a file.
type config map[string]string

// Get reads a key as the edge does.
func (c config) Get(key string) (string, error) {
	if v, ok := c[key]; ok {
		return v, nil
	}
	return "", edge.ErrNotFound
}

// readConfig reads a config file, or standard input for "-".
func readConfig(name string, stdin io.Reader) (config, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	c, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// parseConfig reads the config store's keys from a JSON object of keys,
// or from the Fastly CLI's list of entries.
func parseConfig(data []byte) (config, error) {
	data = bytes.TrimSpace(data)
	if bytes.HasPrefix(data, []byte("[")) {
		var entries []struct {
			Key   *string `json:"item_key"`
			Value *string `json:"item_value"`
		}
		if err := json.Unmarshal(data, &entries); err != nil {
			return nil, fmt.Errorf("not a list of config store entries: %v", err)
		}
		c := config{}
		for i, e := range entries {
			if e.Key == nil || e.Value == nil {
				return nil, fmt.Errorf("entry %d: has no item_key or item_value (the list `fastly config-store-entry list --json` prints)", i)
			}
			c[*e.Key] = *e.Value
		}
		return c, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON object of config store keys: %v", err)
	}
	c := config{}
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			c[k] = s
			continue
		}
		// A room or the bypass rules written as JSON rather than as a
		// string holding JSON: the store holds its text.
		var compact bytes.Buffer
		if bytes.HasPrefix(v, []byte("{")) && json.Compact(&compact, v) == nil {
			c[k] = compact.String()
			continue
		}
		return nil, fmt.Errorf("key %q: must be a string (or, for a room or bypass, a JSON object), not %s", k, v)
	}
	return c, nil
}

// maxValue is the longest value the config store takes.
const maxValue = 8000

// globalKeys are the keys the edge reads besides room.<name>, from
// package settings' table.
func globalKeys() []string {
	var keys []string
	for _, s := range settings.Store {
		if !strings.HasPrefix(s.Name, settings.KeyRoomPrefix) {
			keys = append(keys, s.Name)
		}
	}
	return keys
}

// writeKeys lists the config store's keys and the room settings, from
// package settings' table, for the help.
func writeKeys(w io.Writer) {
	fmt.Fprintf(w, "\nconfig store keys (docs/configuration.md has the whole reference):\n")
	for _, s := range settings.Store {
		fmt.Fprintf(w, "  %-24s %s\n", s.Name, keyLine(s))
	}
	fmt.Fprintf(w, "\nroom settings (the JSON fields of room.<name>):\n")
	for _, s := range settings.Room {
		fmt.Fprintf(w, "  %-24s %s\n", s.Name, keyLine(s))
	}
	fmt.Fprintf(w, "\nrenamed before the first release:\n")
	for _, r := range settings.Renames {
		fmt.Fprintf(w, "  %-24s %s\n", r.Old, r.Problem())
	}
}

// keyLine is a setting's rule and default in a few words.
func keyLine(s settings.Setting) string {
	line := s.Rule()
	if d := s.DefaultString(); d != "" && !(s.Kind.Numeric() && s.Default == 0 && s.DefaultText == "") {
		line += "; default " + d
	}
	return line
}

// checkConfig returns every problem of c, as the edge would log it, and
// what the edge reads the way it was written but an operator would not
// mean (warnings).
func checkConfig(c config) (problems, warnings []string) {
	s := edge.LoadSettings(c)
	_, sandbox := edge.LoadSandboxLimits(c, edge.DefaultSandboxLimits())
	for _, p := range append(s.Problems, sandbox...) {
		problems = append(problems, p.Error())
	}
	if s.UpstashUnset != nil {
		problems = append(problems, s.UpstashUnset.Error())
	}
	listed := map[string]bool{}
	if names, err := queue.ParseRoomIndex(c[settings.KeyRooms]); err == nil {
		for _, n := range names {
			listed[n] = true
		}
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(c[k]) > maxValue {
			problems = append(problems, fmt.Sprintf("%s: %d characters, over the config store's limit of %d", k, len(c[k]), maxValue))
		}
		name, isRoom := strings.CutPrefix(k, settings.KeyRoomPrefix)
		rn, isOld := settings.Renamed(k)
		_, isKey := settings.Lookup(settings.Store[:], k)
		switch {
		case isRoom && !listed[name]:
			warnings = append(warnings, fmt.Sprintf("%s: room %q is not listed in %s, so it is never used", k, name, settings.KeyRooms))
		case isOld:
			// The edge says so itself where the new key is missing.
			if _, set := c[rn.New]; set {
				problems = append(problems, fmt.Sprintf("%s, which is set: delete %s", rn.Problem(), k))
			}
		case !isRoom && !isKey:
			problems = append(problems, fmt.Sprintf("%s: unknown key, which the waiting room never reads (it reads %s and %s<name>)",
				k, strings.Join(globalKeys(), ", "), settings.KeyRoomPrefix))
		}
	}
	return problems, warnings
}

// rescheduled warns of each event of now that was has under the same name
// in the same room with another pre-queue start or start: the store knows
// an event by its schedule as well as its name, so it is a new event, with
// a pre-queue and a draw key of its own (an event once drawn is never
// drawn again), and the two share a name on the panel and in the logs.
// Moving the start of an event whose pre-queue is open is the same event.
func rescheduled(was, now config) []string {
	before := map[string]queue.Event{}
	for _, r := range edge.LoadSettings(was).Rooms {
		for _, e := range r.Events {
			before[r.Name+"\x00"+e.Name] = e
		}
	}
	var warnings []string
	for _, r := range edge.LoadSettings(now).Rooms {
		for _, e := range r.Events {
			old, ok := before[r.Name+"\x00"+e.Name]
			if !ok || old.PrequeueFrom.Equal(e.PrequeueFrom) && (old.Starts.Equal(e.Starts) || time.Now().Before(old.Starts)) {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("%s%s: event %q was scheduled from %s (start %s) and is scheduled again from %s (start %s): "+
				"it is a new event, with a new pre-queue and draw key; give it a name of its own (e.g. %q) so the panel and the logs tell them apart",
				settings.KeyRoomPrefix, r.Name, e.Name, stamp(old.PrequeueFrom), stamp(old.Starts), stamp(e.PrequeueFrom), stamp(e.Starts),
				e.Name+"-"+e.Starts.UTC().Format("2006-01-02")))
		}
	}
	return warnings
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func check(name, previous string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := readConfig(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "wrconfig: %v\n", err)
		return 1
	}
	problems, warnings := checkConfig(c)
	if previous != "" {
		was, err := readConfig(previous, nil)
		if err != nil {
			fmt.Fprintf(stderr, "wrconfig: -previous: %v\n", err)
			return 1
		}
		warnings = append(warnings, rescheduled(was, c)...)
	}
	for _, w := range warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	for _, p := range problems {
		fmt.Fprintf(stdout, "error: %s\n", p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "%d error(s)\n", len(problems))
		return 1
	}
	s := edge.LoadSettings(c)
	names := make([]string, 0, len(s.Rooms))
	for _, r := range s.Rooms {
		names = append(names, r.Name)
	}
	global := "no global bypass rules"
	if s.Bypass != nil {
		global = "global bypass rules"
	}
	fmt.Fprintf(stdout, "ok: %d room(s) (%s), %s\n", len(names), strings.Join(names, ", "), global)
	return 0
}

// listFlag is a repeatable flag.
type listFlag []string

// String lists the values given, as flag.Value asks.
func (l *listFlag) String() string { return strings.Join(*l, ", ") }

// Set adds a value, as flag.Value asks.
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// request is what explain's flags say of a request.
type request struct {
	configFile, host, path, ip, country, method string
	headers, cookies, acls, secrets             listFlag
	verifiedBot                                 bool
}

// parseExplain reads explain's arguments: the host and path, and flags
// before, between or after them.
func parseExplain(args []string, stderr io.Writer) (request, error) {
	var r request
	fs := flag.NewFlagSet("wrconfig explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&r.configFile, "config", "devconfig.json", "the config file")
	fs.StringVar(&r.ip, "ip", "", "the client's address")
	fs.StringVar(&r.country, "country", "", "the client's country")
	fs.StringVar(&r.method, "method", "GET", "the method")
	fs.Var(&r.headers, "header", "a header, 'Name: value'")
	fs.Var(&r.cookies, "cookie", "a cookie, name=value")
	fs.Var(&r.acls, "acl", "an ACL's action, name=ACTION")
	fs.Var(&r.secrets, "secret", "a secret, name=value")
	fs.BoolVar(&r.verifiedBot, "verified-bot", false, "a verified bot")
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return r, err
		}
		args = fs.Args()
		if len(args) > 0 {
			positional = append(positional, args[0])
			args = args[1:]
		}
	}
	if len(positional) != 2 {
		fs.Usage()
		return r, errors.New("explain takes a host and a path")
	}
	r.host, r.path = positional[0], positional[1]
	return r, nil
}

// facts is the platform as explain's flags describe it. What the rules
// ask that no flag says is noted, so explain can say which flag would.
type facts struct {
	country string
	bot     bool
	acls    map[string]string
	secrets map[string][]byte
	notes   []string
}

// Country is --country's value.
func (f *facts) Country(netip.Addr) (string, error) { return f.country, nil }

// VerifiedBot is --verified-bot's value.
func (f *facts) VerifiedBot() (bool, error) { return f.bot, nil }

// ACL is the action --acl gives the named ACL, or no entry.
func (f *facts) ACL(name string, _ netip.Addr) (string, error) {
	a, ok := f.acls[name]
	if !ok {
		f.notes = append(f.notes, fmt.Sprintf("the rules asked ACL %s about the address: taken as no entry (--acl %s=ALLOW says it is allowed)", name, name))
	}
	return a, nil
}

// Secret is the value --secret gives the named secret, or none.
func (f *facts) Secret(name string) ([]byte, error) {
	v, ok := f.secrets[name]
	if !ok {
		f.notes = append(f.notes, fmt.Sprintf("the rules asked for secret %s: taken as missing (--secret %s=VALUE gives its value)", name, name))
	}
	return v, nil
}

// standIn is the address explain gives the rules when only --country or
// --acl says where the client is (TEST-NET-1, RFC 5737): the rules ask
// the platform about an address only when there is one.
var standIn = netip.AddrFrom4([4]byte{192, 0, 2, 1})

// matchRequest builds the rules' request from explain's flags, or says
// which flag is wrong.
func (r request) matchRequest(p urlnorm.Path) (*match.Request, string, error) {
	f := &facts{country: strings.ToUpper(r.country), bot: r.verifiedBot, acls: map[string]string{}, secrets: map[string][]byte{}}
	if r.country != "" && (len(r.country) != 2 || strings.Trim(strings.ToUpper(r.country), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "") {
		return nil, "", fmt.Errorf("--country %q: must be two letters, an ISO 3166-1 alpha-2 code such as DE", r.country)
	}
	for _, a := range r.acls {
		name, action, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, "", fmt.Errorf("--acl %q: must be name=ACTION, such as office=ALLOW", a)
		}
		f.acls[name] = action
	}
	for _, s := range r.secrets {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return nil, "", fmt.Errorf("--secret %q: must be name=value", s)
		}
		f.secrets[name] = []byte(value)
	}
	header := map[string][]string{}
	for _, h := range r.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, "", fmt.Errorf("--header %q: must be 'Name: value'", h)
		}
		k := strings.ToLower(strings.TrimSpace(name))
		header[k] = append(header[k], strings.TrimSpace(value))
	}
	cookies := map[string]string{}
	for _, c := range r.cookies {
		name, value, _ := strings.Cut(c, "=")
		if _, seen := cookies[name]; !seen {
			cookies[name] = value
		}
	}
	req := &match.Request{
		Host: r.host, Paths: []string{p.Literal, p.Loose}, Method: r.method,
		Header: func(name string) []string { return header[strings.ToLower(name)] },
		Cookie: func(name string) (string, bool) { v, ok := cookies[name]; return v, ok },
		Facts:  f,
	}
	var where string
	switch {
	case r.ip != "":
		ip, err := netip.ParseAddr(r.ip)
		if err != nil {
			return nil, "", fmt.Errorf("--ip %q: not an IP address", r.ip)
		}
		req.IP = ip
		where = "from " + ip.String()
	case r.country != "" || len(r.acls) > 0:
		req.IP = standIn
		where = "from an address the flags describe (" + standIn.String() + " stands in for it)"
	default:
		where = "from an unknown address"
	}
	if r.country != "" {
		where += " in " + f.country
	} else {
		where += ", country unknown"
	}
	return req, where, nil
}

func explain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	r, err := parseExplain(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "wrconfig: %v\n", err)
		return 2
	}
	c, err := readConfig(r.configFile, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "wrconfig: %v\n", err)
		return 1
	}
	host, err := urlnorm.Host(r.host)
	if err == nil {
		if !strings.HasPrefix(r.path, "/") {
			err = fmt.Errorf("the path %q must start with /", r.path)
		}
	}
	path, query, _ := strings.Cut(r.path, "?")
	var p urlnorm.Path
	if err == nil {
		p, err = urlnorm.ParsePath(path)
	}
	if err == nil {
		err = urlnorm.CheckQuery(query)
	}
	if err != nil {
		fmt.Fprintf(stdout, "answer:  400 Bad request (the edge refuses it before any rule: %v)\n", err)
		return 0
	}
	req, where, err := r.matchRequest(p)
	if err != nil {
		fmt.Fprintf(stderr, "wrconfig: %v\n", err)
		return 2
	}
	req.Host = host
	settings := edge.LoadSettings(c)
	if n := len(settings.Problems); n > 0 {
		fmt.Fprintf(stderr, "wrconfig: the config has %d problem(s), which the edge works around as below; see wrconfig check %s\n", n, r.configFile)
	}
	// The flags' facts never fail, so Route has no failure to report.
	dest, j, _ := settings.Route(req)
	fmt.Fprintf(stdout, "request: %s %s%s %s\n", r.method, host, p.Escaped, where)
	describe(stdout, settings, req, dest, j, p)
	for _, n := range req.Facts.(*facts).notes {
		fmt.Fprintf(stdout, "note:    %s\n", n)
	}
	return 0
}

// describe prints the route and why.
func describe(w io.Writer, s edge.Settings, req *match.Request, dest edge.Destination, j match.Judgement[*queue.Room], p urlnorm.Path) {
	room := "none"
	if j.Room != nil {
		room = j.Room.Name
	}
	switch dest {
	case edge.ToAdmin:
		fmt.Fprintf(w, "room:    none\nrule:    admin panel\nwhy:     the path is at or below admin_path %s, which no room holds\n", s.AdminPath)
	case edge.ToAPI:
		fmt.Fprintf(w, "room:    none\nrule:    admin API\nwhy:     the path is at or below api_path %s, which no room holds\n", s.APIPath)
	case edge.ToLeave:
		fmt.Fprintf(w, "room:    none\nrule:    departure beacon\nwhy:     %s is the edge's own path for leaving a line\n", edge.LeavePath)
	case edge.ToHeartbeat, edge.ToHeartbeatScript:
		fmt.Fprintf(w, "room:    none\nrule:    %s\nwhy:     %s is the edge's own path for origin pages' heartbeat\n", dest, p.Escaped)
	case edge.ToLine:
		fmt.Fprintf(w, "room:    %s\nrule:    line\nwhy:     %s; no bypass rule matched, so it needs a place in the line\n", room, held(s, req, j.Room))
		if p.Ambiguous != "" {
			fmt.Fprintf(w, "answer:  400 Bad request: the path %s, which a room's line does not accept\n", p.Ambiguous)
		}
	case edge.ToBypass:
		by := fmt.Sprintf("room %s's bypass rule %q", room, j.Bypass)
		if rule, global := strings.CutPrefix(j.Bypass, "global:"); global {
			by = fmt.Sprintf("the global bypass rule %q (config key %s)", rule, settings.KeyBypass)
		}
		fmt.Fprintf(w, "room:    %s\nrule:    bypass %s\nwhy:     %s; %s lets it through to the origin, with %s: %s, no place and no store call\n",
			room, j.Bypass, held(s, req, j.Room), by, edge.BypassHeader, j.Bypass)
	case edge.ToUnavailable:
		fmt.Fprintf(w, "room:    none\nrule:    unavailable (503)\nwhy:     no valid room holds it, and a room is broken (see wrconfig check), which may have been meant to\n")
	default:
		fmt.Fprintf(w, "room:    none\nrule:    origin\nwhy:     no room holds this host and path, so it goes to the origin untouched\n")
	}
}

// held says why room holds the request: how specifically it matched, and
// why the other rooms that matched it lost.
func held(s edge.Settings, req *match.Request, room *queue.Room) string {
	specs := map[*queue.Room]match.Specificity{}
	for _, r := range s.Rooms {
		for _, path := range uniq(req.Paths) {
			if spec, ok, _ := r.Target.Match(req, path); ok {
				specs[r] = spec
				break
			}
		}
	}
	why := fmt.Sprintf("room %s holds it (%s)", room.Name, specs[room])
	for _, r := range s.Rooms {
		spec, ok := specs[r]
		switch {
		case !ok || r == room:
		case specs[room].MoreThan(spec):
			why += fmt.Sprintf("; room %s matches less specifically (%s)", r.Name, spec)
		default:
			why += fmt.Sprintf("; room %s matches as specifically (%s), but comes later in rooms", r.Name, spec)
		}
	}
	return why
}

func uniq(list []string) []string {
	if len(list) == 2 && list[0] == list[1] {
		return list[:1]
	}
	return list
}
