package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/settings"
)

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

func runWith(args []string, stdin string) result {
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// checkOutput fails unless r has code and every want line in its output.
func checkOutput(t *testing.T, r result, code int, want []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
		}
	}
}

// broken is a config with a problem in each place one can be.
const broken = `{
  "rooms": "a, b, c",
  "room.a": {"paths": ["/"], "new_users_per_minute": 5, "burst": -1},
  "room.b": "{\"paths\":[\"/b/\"],\"new_users_per_minute\":5,\"bypass_ips\":[\"10.0.0.1/8\"]}",
  "room.unlisted": "{}",
  "bypass": "{\"bypass_methods\":[\"GET /\"]}",
  "admin_pth": "/ops",
  "admin_path": "ops",
  "store_timeout_ms": "5",
  "store_timeout": "0.01",
  "hsts_max_age": "-1",
  "upstash_url": "https://your-database.upstash.io"
}`

func TestCheck(t *testing.T) {
	long := `{"rooms":"a","room.a":"{\"paths\":[\"/\"],` + strings.Repeat(" ", 8000) + `\"new_users_per_minute\":5}"}`
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  []string
	}{
		{"the demo config", []string{"check", filepath.Join("..", "..", "..", "devconfig.json")}, "", 0,
			[]string{"ok: 3 room(s) (shop, sale_de, crowd), global bypass rules"}},
		{"rooms as objects, from standard input", []string{"check", "-"},
			`{"rooms":"a","room.a":{"paths":["/"],"countries":["DE"],"mode":"reject"},"bypass":{"bypass_methods":["OPTIONS"]}}`, 0,
			[]string{"ok: 1 room(s) (a), global bypass rules"}},
		{"the Fastly CLI's list", []string{"check", "-"},
			`[{"item_key":"rooms","item_value":"a","store_id":"x"},{"item_key":"room.a","item_value":"{\"paths\":[\"/\"],\"mode\":\"reject\"}"}]`, 0,
			[]string{"ok: 1 room(s) (a), no global bypass rules"}},
		{"every problem", []string{"check", "-"}, broken, 1, []string{
			`error: invalid room: room "a": burst: must be between 1 and 1e+07, got -1`,
			`error: invalid room: room "b": bypass_ips[0]: "10.0.0.1/8" has bits set past its /8`,
			`error: invalid room: room "c": room.c: not found`,
			`error: bypass.bypass_methods[0]: "GET /" is not a method`,
			`error: admin_pth: unknown key, which the waiting room never reads`,
			`error: admin_path: "ops" must be a path below /`,
			`error: store_timeout_ms was renamed store_timeout, in seconds, which is set: delete store_timeout_ms`,
			`error: store_timeout: "0.01" must be a number of seconds from 0.05 to 30; using 1.5`,
			`error: hsts_max_age: "-1" must be a whole number of seconds`,
			`error: config upstash_url is the placeholder`,
			`warning: room.unlisted: room "unlisted" is not listed in rooms, so it is never used`,
			"10 error(s)",
		}},
		{"old names", []string{"check", "-"},
			`{"rooms":"a","room.a":{"paths":["/"],"max_active_users":5,"refresh_seconds":5},"store_timeout_ms":"1500","sandbox_seconds":"60"}`, 1, []string{
				`error: store_timeout_ms was renamed store_timeout, in seconds: set store_timeout instead`,
				`error: sandbox_seconds was renamed sandbox_lifetime, in seconds: set sandbox_lifetime instead`,
				`error: invalid room: room "a": refresh_seconds was renamed refresh, in seconds`,
				"3 error(s)",
			}},
		{"the help lists every key from the table", []string{"help"}, "", 0, []string{
			"config store keys",
			"  store_timeout            a number of seconds from 0.05 to 30; default 1.5\n",
			"  sandbox_requests         a whole number of requests from 1 to 10000; default 100 (Go build), 20 (TinyGo build)\n",
			"  refresh                  a whole number of seconds from 1 to 600; default 10\n",
			"  snapshot_ttl             a number of seconds from 0 (ask the store at every poll) to 10; default 1\n",
			"  snapshot_ttl_ms          snapshot_ttl_ms was renamed snapshot_ttl, in seconds\n",
		}},
		{"a value over the store's limit", []string{"check", "-"}, long, 1,
			[]string{"error: room.a: 8040 characters, over the config store's limit of 8000"}},
		{"not JSON", []string{"check", "-"}, `rooms=a`, 1, []string{"wrconfig: -: not a JSON object of config store keys"}},
		{"a value of the wrong type", []string{"check", "-"}, `{"rooms":["a"]}`, 1,
			[]string{`wrconfig: -: key "rooms": must be a string (or, for a room or bypass, a JSON object), not ["a"]`}},
		{"a list entry without a value", []string{"check", "-"}, `[{"item_key":"rooms"}]`, 1,
			[]string{"wrconfig: -: entry 0: has no item_key or item_value"}},
		{"no such file", []string{"check", "no-such-file.json"}, "", 1, []string{"wrconfig: open no-such-file.json"}},
		{"no file", []string{"check"}, "", 2, []string{"usage:"}},
		{"no command", nil, "", 2, []string{"usage:"}},
		{"an unknown command", []string{"lint"}, "", 2, []string{`unknown command "lint"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkOutput(t, runWith(tc.args, tc.stdin), tc.code, tc.want)
		})
	}
}

// The help names every key and room setting of package settings' table.
func TestHelpListsTheTable(t *testing.T) {
	r := runWith([]string{"help"}, "")
	for _, table := range [][]settings.Setting{settings.Store[:], settings.Room[:]} {
		for _, s := range table {
			if !strings.Contains(r.stdout, "\n  "+s.Name+" ") {
				t.Errorf("the help lacks %s", s.Name)
			}
		}
	}
}

// explained is the config explain's cases read: a German sale inside a
// site-wide room on one host, an API room on a wildcard, global rules,
// and a broken room.
const explained = `{
  "rooms": "shop, sale, api, broken",
  "room.shop": {"hosts":["shop.example.com"],"paths":["/"],"bypass_acl":"office","bypass_headers":[{"name":"X-Monitor","secret":"monitor_key"}],"bypass_cookies":["staff"],"mode":"reject"},
  "room.sale": {"hosts":["shop.example.com"],"paths":["/sale/"],"countries":["DE"],"mode":"reject"},
  "room.api": {"hosts":["*.example.com"],"paths":["/api/*/orders"],"bypass_verified_bots":true,"bypass_ips":["192.0.2.0/24"],"mode":"reject"},
  "room.broken": {"paths":["/b/"]},
  "bypass": {"bypass_methods":["OPTIONS"]}
}`

func TestExplain(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(config, []byte(explained), 0o644); err != nil {
		t.Fatal(err)
	}
	explain := func(args ...string) []string { return append([]string{"explain", "-config", config}, args...) }
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"the sale from Germany", explain("shop.example.com", "/sale/shoes", "--country", "de"), 0, []string{
			"request: GET shop.example.com/sale/shoes from an address the flags describe (192.0.2.1 stands in for it) in DE",
			"room:    sale\n", "rule:    line\n",
			"why:     room sale holds it (exact host, path of 6 literal characters, country-targeted); room shop matches less specifically (exact host, path of 1 literal character); no bypass rule matched",
			"config has 1 problem(s)",
		}},
		{"the sale from elsewhere", explain("--country", "FR", "--ip", "198.51.100.7", "shop.example.com", "/sale/shoes"), 0, []string{
			"from 198.51.100.7 in FR", "room:    shop\n", "rule:    line\n",
			"note:    the rules asked ACL office about the address: taken as no entry (--acl office=ALLOW says it is allowed)",
		}},
		{"the office", explain("shop.example.com", "/cart", "--ip", "198.51.100.7", "--acl", "office=allow"), 0, []string{
			"rule:    bypass acl:office\n",
			`room shop's bypass rule "acl:office" lets it through to the origin, with Waiting-Room-Bypass: acl:office, no place and no store call`,
		}},
		{"a secret header", explain("shop.example.com", "/cart", "--header", "X-Monitor: k3y", "--secret", "monitor_key=k3y"), 0,
			[]string{"rule:    bypass header:X-Monitor\n"}},
		{"a secret header without its secret", explain("shop.example.com", "/cart", "--header", "X-Monitor: k3y"), 0, []string{
			"rule:    line\n", "note:    the rules asked for secret monitor_key: taken as missing (--secret monitor_key=VALUE gives its value)",
		}},
		{"a cookie", explain("shop.example.com", "/cart", "--cookie", "staff=1"), 0, []string{"rule:    bypass cookie:staff\n"}},
		{"a global rule", explain("shop.example.com", "/cart", "--method", "OPTIONS"), 0, []string{
			"rule:    bypass global:method\n", `the global bypass rule "method" (config key bypass) lets it through`,
		}},
		{"a verified bot on a wildcard host", explain("eu.example.com", "/api/v2/orders", "--verified-bot"), 0, []string{
			"room:    api\n", "rule:    bypass verified-bot\n", "room api holds it (wildcard host (suffix of 12 characters), path of 12 literal characters)",
		}},
		{"an address in a range", explain("eu.example.com", "/api/v2/orders", "--ip", "::ffff:192.0.2.9"), 0, []string{"rule:    bypass ip\n"}},
		{"a glob's star stays in its segment", explain("eu.example.com", "/api/v2/x/orders"), 0, []string{
			"room:    none\n", "rule:    unavailable (503)\n",
		}},
		{"no room, none broken", []string{"explain", "-config", "-", "other.test", "/x"}, 0, []string{
			"room:    none\n", "rule:    origin\n", "no room holds this host and path",
		}},
		{"the admin panel", explain("shop.example.com", "/_wr/admin/rooms"), 0, []string{"rule:    admin panel\n"}},
		{"the admin API", explain("shop.example.com", "/_wr/api/rooms/shop/stats"), 0, []string{"rule:    admin API\n", "api_path /_wr/api"}},
		{"the departure beacon", explain("shop.example.com", "/_wr/leave", "--method", "POST"), 0, []string{"rule:    departure beacon\n"}},
		{"a path in normal form", explain("SHOP.example.com.", "/static/../sale/%73hoes"), 0, []string{
			"request: GET shop.example.com/sale/shoes", "room:    shop\n",
		}},
		{"an ambiguous path in a line", explain("shop.example.com", "/a%2fb"), 0, []string{
			"rule:    line\n", "answer:  400 Bad request: the path holds an encoded slash",
		}},
		{"a path refused everywhere", explain("shop.example.com", "/a%00b"), 0, []string{"answer:  400 Bad request (the edge refuses it before any rule"}},
		{"a relative path", explain("shop.example.com", "sale"), 0, []string{`answer:  400 Bad request (the edge refuses it before any rule: the path "sale" must start with /)`}},
		{"a bad country", explain("shop.example.com", "/", "--country", "DEU"), 2, []string{`--country "DEU": must be two letters`}},
		{"a bad address", explain("shop.example.com", "/", "--ip", "1.2.3"), 2, []string{`--ip "1.2.3": not an IP address`}},
		{"a bad header", explain("shop.example.com", "/", "--header", "X-Monitor"), 2, []string{`--header "X-Monitor": must be 'Name: value'`}},
		{"a bad ACL flag", explain("shop.example.com", "/", "--acl", "office"), 2, []string{`--acl "office": must be name=ACTION`}},
		{"no path", explain("shop.example.com"), 2, []string{"explain takes a host and a path"}},
		{"an unknown flag", explain("shop.example.com", "/", "--geo", "DE"), 2, []string{"flag provided but not defined: -geo"}},
		{"no config", []string{"explain", "-config", "no-such.json", "a", "/"}, 1, []string{"wrconfig: open no-such.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkOutput(t, runWith(tc.args, `{"rooms":"a","room.a":{"hosts":["a.test"],"paths":["/"],"mode":"reject"}}`), tc.code, tc.want)
		})
	}
}

// weekly is a config whose room "a" has the event "weekly" from pq, with
// its start an hour later.
func weekly(pq string) string {
	t, _ := time.Parse(time.RFC3339, pq)
	return fmt.Sprintf(`{"rooms":"a","room.a":{"paths":["/"],"mode":"reject","events":[{"name":"weekly","prequeue_from":%q,"starts":%q,"ends":%q,"overrides":{"max_active_users":5}}]}}`,
		pq, t.Add(time.Hour).Format(time.RFC3339), t.Add(2*time.Hour).Format(time.RFC3339))
}

// TestCheckWarnsOfARescheduledEvent: an event of the deployed config
// scheduled again under its name is a new event to the store, and check
// says so; the same schedule, or a start moved before it came, is not.
func TestCheckWarnsOfARescheduledEvent(t *testing.T) {
	dir := t.TempDir()
	deployed := filepath.Join(dir, "deployed.json")
	if err := os.WriteFile(deployed, []byte(weekly("2026-11-19T09:00:00Z")), 0o644); err != nil {
		t.Fatal(err)
	}
	future := filepath.Join(dir, "future.json")
	if err := os.WriteFile(future, []byte(weekly("2099-11-19T09:00:00Z")), 0o644); err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(weekly("2099-11-19T09:00:00Z"), `"starts":"2099-11-19T10:00:00Z"`, `"starts":"2099-11-19T10:30:00Z"`, 1)
	const warned = `warning: room.a: event "weekly" was scheduled from 2026-11-19T09:00:00Z (start 2026-11-19T10:00:00Z) and is scheduled again from 2026-11-26T09:00:00Z (start 2026-11-26T10:00:00Z): it is a new event, with a new pre-queue and draw key; give it a name of its own (e.g. "weekly-2026-11-26")`
	for _, tc := range []struct {
		name     string
		previous string
		config   string
		warn     bool
	}{
		{"a week later, under the same name", deployed, weekly("2026-11-26T09:00:00Z"), true},
		{"the same schedule", deployed, weekly("2026-11-19T09:00:00Z"), false},
		{"the start moved before it came", future, moved, false},
		{"no previous config", "", weekly("2026-11-26T09:00:00Z"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"check", "-"}
			if tc.previous != "" {
				args = []string{"check", "-previous", tc.previous, "-"}
			}
			r := runWith(args, tc.config)
			if r.code != 0 || strings.Contains(r.stdout, "weekly\" was scheduled") != tc.warn {
				t.Fatalf("exit %d, warned %v, want 0 and %v:\n%s%s", r.code, !tc.warn, tc.warn, r.stdout, r.stderr)
			}
			if tc.warn && !strings.Contains(r.stdout, warned) {
				t.Fatalf("the warning:\n%s\nwant:\n%s", r.stdout, warned)
			}
		})
	}
	checkOutput(t, runWith([]string{"check", "-previous", filepath.Join(dir, "missing.json"), "-"}, weekly("2026-11-26T09:00:00Z")), 1,
		[]string{"wrconfig: -previous: open"})
}
