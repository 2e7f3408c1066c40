package fastlyhost

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The platform facts: ACLs, device detection, shielding sites and the
// compute runtime calls, checked against Viceroy's behaviour (src/acl.rs,
// src/config/acl.rs, src/config/device_detection.rs, src/shielding_site.rs
// and their host calls).

// platformManifest is a fastly.toml with every platform section, and the
// files it names.
var platformManifest = map[string]string{
	"fastly.toml": `
[local_server.acls]
office = "office.json"
lab = { file = "lab.json" }
[local_server.device_detection]
format = "inline-toml"
[local_server.device_detection.user_agents."Phone/1.0"]
device = { name = "iPhone", brand = "Apple", is_mobile = true }
[local_server.shielding_sites]
"pdx-or-us" = "LOCAL"
"bfi-wa-us" = { unencrypted = "HTTP://LocalHost:80", encrypted = "https://localhost:8443/x" }
`,
	"office.json": `{"entries": [
		{"op": "create", "prefix": "10.0.0.0/8", "action": "block"},
		{"op": "create", "prefix": "10.1.2.3/16", "action": "ALLOW"},
		{"op": "create", "prefix": "10.1.0.0/16", "action": "Maybe"},
		{"op": "create", "prefix": "2001:db8::/32", "action": "ALLOW"}
	]}`,
	"lab.json": `{"entries": []}`,
}

// TestPlatformCalls runs a guest that asks each platform call through the
// SDK, as its integration tests do.
func TestPlatformCalls(t *testing.T) {
	wasm := mustBuildGuest(t, "platformguest")
	m, err := LoadManifest(writeFiles(t, platformManifest))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := New(ctx, wasm, m, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	var stdout bytes.Buffer
	code, err := h.Run(ctx, "platformguest", []string{
		"acl", "office", "10.9.9.9",
		"acl", "office", "10.1.9.9",
		"acl", "office", "192.168.1.1",
		"acl", "office", "1.1.1",
		"acl", "office", "::ffff:10.1.1.1",
		"acl", "office", "2001:db8::1",
		"acl", "lab", "10.1.1.1",
		"acl", "nope", "10.1.1.1",
		"device", "Phone/1.0",
		"device", "phone/1.0",
		"shield", "pdx-or-us",
		"shield", "bfi-wa-us",
		"shield", "nope",
		"vcpu",
		"heap",
	}, &stdout, io.Discard)
	if code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, stdout.String())
	}
	want := []string{
		"acl office 10.9.9.9: 10.0.0.0/8 BLOCK <nil>",
		// Two /16 prefixes match: the last in the file wins.
		"acl office 10.1.9.9: 10.1.0.0/16 Other(Maybe) <nil>",
		"acl office 192.168.1.1:   acl: no content",
		"acl office 1.1.1:   acl: invalid argument",
		// The SDK sends an IPv4-mapped address as IPv4.
		"acl office ::ffff:10.1.1.1: 10.1.0.0/16 Other(Maybe) <nil>",
		"acl office 2001:db8::1: 2001:db8::/32 ALLOW <nil>",
		"acl lab 10.1.1.1:   acl: no content",
		"acl nope: acl: not found",
		"device: iPhone Apple true",
		"device: device not found",
		"shield pdx-or-us: running on true",
		"shield bfi-wa-us: running on false",
		"shield nope: Fastly error: Inval",
		"vcpu: sleep counted false, busy work advanced true",
		"heap: non-zero true <nil>",
	}
	got := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLoadManifestPlatformSections checks what the platform sections read
// into, and that the forms Viceroy refuses are refused, in its words.
func TestLoadManifestPlatformSections(t *testing.T) {
	m, err := LoadManifest(writeFiles(t, platformManifest))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ name, got, want string }{
		{"acl entries", strings.Join(aclStrings(m.ACLs["office"]), " "), "10.0.0.0/8=BLOCK 10.1.0.0/16=ALLOW 10.1.0.0/16=Other(Maybe) 2001:db8::/32=ALLOW"},
		{"acl from a table", strings.Join(aclStrings(m.ACLs["lab"]), " "), ""},
		{"device", m.Devices.UserAgents["Phone/1.0"]["device"].(map[string]any)["brand"].(string), "Apple"},
		{"local site", strings.Join([]string{m.ShieldingSites["pdx-or-us"].Unencrypted, m.ShieldingSites["pdx-or-us"].Encrypted}, "|"), "|"},
		{"remote site", m.ShieldingSites["bfi-wa-us"].Unencrypted + "|" + m.ShieldingSites["bfi-wa-us"].Encrypted, "http://localhost/|https://localhost:8443/x"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if !m.ShieldingSites["pdx-or-us"].Local || m.ShieldingSites["bfi-wa-us"].Local {
		t.Errorf("local sites: %+v", m.ShieldingSites)
	}

	files := map[string]string{
		"good.json":       `{"entries": [{"prefix": "1.2.3.4/32", "action": "ALLOW"}]}`,
		"no-entries.json": `{"items": []}`,
		"Entries.json":    `{"Entries": []}`,
		"no-action.json":  `{"entries": [{"prefix": "1.2.3.4/32"}]}`,
		"no-mask.json":    `{"entries": [{"prefix": "1.2.3.4", "action": "ALLOW"}]}`,
		"mask-33.json":    `{"entries": [{"prefix": "1.2.3.4/33", "action": "ALLOW"}]}`,
		"mask-129.json":   `{"entries": [{"prefix": "200::/129", "action": "ALLOW"}]}`,
		"mask-0.json":     `{"entries": [{"prefix": "0.0.0.0/0", "action": "ALLOW"}]}`,
		"mask-word.json":  `{"entries": [{"prefix": "200::/none", "action": "ALLOW"}]}`,
		"bad-ip.json":     `{"entries": [{"prefix": "1.2.3.four/16", "action": "ALLOW"}]}`,
		"bad-ip6.json":    `{"entries": [{"prefix": "200::end/32", "action": "ALLOW"}]}`,
		"not-json.json":   `entries`,
		"ua.json":         `{"UA/1": {"device": {"name": "x"}}}`,
		"ua-list.json":    `["UA/1"]`,
		"ua-string.json":  `{"UA/1": "x"}`,
	}
	refused := []struct{ name, toml, want string }{
		{"acl not a string or table", "[local_server.acls]\nx = 1", "local_server.acls.x: acl must be a TOML table or string"},
		{"acl table without file", "[local_server.acls.x]\npath = \"good.json\"", "local_server.acls.x: missing 'file' field"},
		{"acl file not a string", "[local_server.acls.x]\nfile = 1", "missing 'file' field"},
		{"acl file missing", "[local_server.acls]\nx = \"missing.json\"", "local_server.acls.x: open "},
		{"acl file not json", "[local_server.acls]\nx = \"not-json.json\"", "local_server.acls.x: not-json.json: invalid character"},
		{"acl without entries", "[local_server.acls]\nx = \"no-entries.json\"", "missing field `entries`"},
		{"acl field names are exact", "[local_server.acls]\nx = \"Entries.json\"", "missing field `entries`"},
		{"acl entry without action", "[local_server.acls]\nx = \"no-action.json\"", "entry 0: missing field `action`"},
		{"acl prefix without mask", "[local_server.acls]\nx = \"no-mask.json\"", "invalid format '1.2.3.4': want IP/MASK"},
		{"acl ipv4 mask too long", "[local_server.acls]\nx = \"mask-33.json\"", "mask outside allowed range [1, 32]: 33"},
		{"acl ipv6 mask too long", "[local_server.acls]\nx = \"mask-129.json\"", "mask outside allowed range [1, 128]: 129"},
		{"acl mask zero", "[local_server.acls]\nx = \"mask-0.json\"", "mask outside allowed range [1, 32]: 0"},
		{"acl mask not a number", "[local_server.acls]\nx = \"mask-word.json\"", "invalid prefix none: invalid digit found in string"},
		{"acl ipv4 invalid", "[local_server.acls]\nx = \"bad-ip.json\"", "invalid ip address 1.2.3.four"},
		{"acl ipv6 invalid", "[local_server.acls]\nx = \"bad-ip6.json\"", "invalid ip address 200::end"},
		{"device not a table", "[local_server]\ndevice_detection = 1", "local_server.device_detection: definition was not provided as a TOML table"},
		{"device format empty", "[local_server.device_detection]\nformat = \"\"", "'format' field is empty"},
		{"device format not a string", "[local_server.device_detection]\nformat = 1", "'format' field was not a string"},
		{"device format unknown", "[local_server.device_detection]\nformat = \"csv\"", "'csv' is not a valid format for the device detection mapping. Supported format(s) are: 'inline-toml', 'json'."},
		{"device inline without user_agents", "[local_server.device_detection]\nformat = \"inline-toml\"", "missing 'user_agents' field"},
		{"device user_agents not a table", "[local_server.device_detection]\nformat = \"inline-toml\"\nuser_agents = 1", "'user_agents' was not provided as a TOML table"},
		{"device entry not a table", "[local_server.device_detection]\nformat = \"inline-toml\"\nuser_agents = { \"UA/1\" = \"x\" }", "inline device detection value was not a string"},
		{"device entry holds an array", "[local_server.device_detection]\nformat = \"inline-toml\"\nuser_agents = { \"UA/1\" = { device = { tags = [1] } } }", "inline device detection value was not a string"},
		{"device json without file", "[local_server.device_detection]\nformat = \"json\"", "missing 'file' field"},
		{"device json file empty", "[local_server.device_detection]\nformat = \"json\"\nfile = \"\"", "'file' field is empty"},
		{"device json file not a string", "[local_server.device_detection]\nformat = \"json\"\nfile = 1", "'file' field was not a string"},
		{"device json not an object", "[local_server.device_detection]\nformat = \"json\"\nfile = \"ua-list.json\"", "The file is expected to contain a single JSON Object"},
		{"device json entry not an object", "[local_server.device_detection]\nformat = \"json\"\nfile = \"ua-string.json\"", "inline device detection value was not a string"},
		{"shield string not local", "[local_server.shielding_sites]\nx = \"remote\"", "local_server.shielding_sites.x: Illegal TOML string for shielding site; must be 'local'"},
		{"shield neither string nor table", "[local_server.shielding_sites]\nx = 1", "Illegal TOML value for shielding site; must be either the string 'local' or a table"},
		{"shield table without encrypted", "[local_server.shielding_sites.x]\nunencrypted = \"http://a/\"", "Illegal table for shielding site; must have exactly one key named 'encrypted', and one named 'unencrypted'"},
		{"shield table with a third key", "[local_server.shielding_sites.x]\nunencrypted = \"http://a/\"\nencrypted = \"https://a/\"\nname = \"a\"", "Illegal table for shielding site"},
		{"shield url not a string", "[local_server.shielding_sites.x]\nunencrypted = \"http://a/\"\nencrypted = 1", "Illegal table for shielding site"},
		{"shield url relative", "[local_server.shielding_sites.x]\nunencrypted = \"localhost\"\nencrypted = \"https://a/\"", "Illegal URL (localhost): relative URL without a base"},
		{"shield url without host", "[local_server.shielding_sites.x]\nunencrypted = \"http://a/\"\nencrypted = \"https:///x\"", "Illegal URL (https:///x): empty host"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			f := map[string]string{"fastly.toml": tc.toml}
			for k, v := range files {
				f[k] = v
			}
			_, err := LoadManifest(writeFiles(t, f))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error containing %q", err, tc.want)
			}
		})
	}
	accepted := []struct{ name, toml string }{
		{"acl file ignores op and unknown fields", "[local_server.acls]\nx = \"good.json\""},
		{"acl table ignores other keys", "[local_server.acls.x]\nfile = \"good.json\"\nformat = \"json\""},
		{"device without format is no mapping", "[local_server.device_detection]\nuser_agents = 1"},
		{"device json", "[local_server.device_detection]\nformat = \"json\"\nfile = \"ua.json\""},
		{"shield local in any case", "[local_server.shielding_sites]\nx = \"Local\""},
		{"shield URLs of any scheme", "[local_server.shielding_sites.x]\nunencrypted = \"https://a/\"\nencrypted = \"http://a/\""},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			f := map[string]string{"fastly.toml": tc.toml}
			for k, v := range files {
				f[k] = v
			}
			if _, err := LoadManifest(writeFiles(t, f)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func aclStrings(a *ACL) []string {
	var out []string
	for _, e := range a.Entries {
		out = append(out, e.Prefix.String()+"="+e.Action)
	}
	return out
}

// TestACLPrefix is Viceroy's prefix_json_roundtrip: the address is masked
// to its prefix and printed as Rust prints it.
func TestACLPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"255.255.255.255/32":               "255.255.255.255/32",
		"255.255.255.255/8":                "255.0.0.0/8",
		"2002::1234:abcd:ffff:c0a8:101/64": "2002:0:0:1234::/64",
		"2000::AB/32":                      "2000::/32",
		"1.2.3.4/+8":                       "1.0.0.0/8",
	} {
		p, err := parseACLPrefix(in)
		if err != nil || p.String() != want {
			t.Errorf("%s: %v, %v, want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"1.2.3.4/33", "200::/129", "200::/none", "1.2.3.four/16", "200::end/32", "1.2.3.4", "200::", "fe80::1%eth0/64", "1.2.3.4/256", "1.2.3.4/"} {
		if p, err := parseACLPrefix(in); err == nil {
			t.Errorf("%s: %v, want an error", in, p)
		}
	}
}

// TestACLLookup is Viceroy's acl_lookup and prefix_is_match: the longest
// prefix wins wherever it is in the file, and the families never mix.
func TestACLLookup(t *testing.T) {
	entry := func(p, action string) ACLEntry {
		prefix, err := parseACLPrefix(p)
		if err != nil {
			t.Fatal(err)
		}
		return ACLEntry{Prefix: prefix, Action: action}
	}
	acl := &ACL{Entries: []ACLEntry{
		entry("192.168.100.0/16", "a"),
		entry("192.168.100.0/24", "b"),
		entry("192.168.100.0/8", "c"),
		entry("face::/16", "d"),
		entry("::ffff:10.0.0.0/104", "e"),
	}}
	for ip, want := range map[string]string{
		"192.168.100.1":      "b",
		"192.168.200.1":      "a",
		"192.1.1.1":          "c",
		"1.1.1.1":            "",
		"face:1:2:3:4:5:6:7": "d",
		"10.1.1.1":           "",
		"::ffff:10.1.1.1":    "e",
		"::ffff:192.1.1.1":   "",
	} {
		e, found := acl.Lookup(netip.MustParseAddr(ip))
		if e.Action != want || found != (want != "") {
			t.Errorf("%s: %+v %v, want %q", ip, e, found, want)
		}
	}
}

// TestACLEntryJSON checks the body of a match is serde_json's pretty form.
func TestACLEntryJSON(t *testing.T) {
	p, _ := parseACLPrefix("1.2.3.4/32")
	b, err := aclEntryJSON(ACLEntry{Prefix: p, Action: aclAction("allow")})
	if want := "{\n  \"prefix\": \"1.2.3.4/32\",\n  \"action\": \"ALLOW\"\n}"; err != nil || string(b) != want {
		t.Errorf("%q, %v, want %q", b, err, want)
	}
	for in, want := range map[string]string{"ALLOW": "ALLOW", "block": "BLOCK", "potato": "Other(potato)"} {
		if got := aclAction(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestSerdeJSON checks device data reads as serde_json writes it.
func TestSerdeJSON(t *testing.T) {
	b, err := serdeJSON(map[string]any{"z": 1.0, "a": map[string]any{"f": 12.5, "i": int64(3), "s": "<&>"}})
	if want := `{"a":{"f":12.5,"i":3,"s":"<&>"},"z":1.0}`; err != nil || string(b) != want {
		t.Errorf("%s, %v, want %s", b, err, want)
	}
}

// TestDeviceFileIsReadAtEveryLookup edits a json mapping's file: Viceroy
// reads it again at each lookup.
func TestDeviceFileIsReadAtEveryLookup(t *testing.T) {
	path := writeFiles(t, map[string]string{
		"fastly.toml": "[local_server.device_detection]\nformat = \"json\"\nfile = \"ua.json\"",
		"ua.json":     `{"UA/1": {"device": {"name": "one"}}}`,
	})
	m, err := LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "ua.json"), []byte(`{"UA/1": {"device": {"name": "two", "n": 1.0}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, found, err := m.Devices.lookup("UA/1")
	if want := `{"device":{"n":1.0,"name":"two"}}`; string(doc) != want || !found || err != nil {
		t.Errorf("%s %v %v, want %s", doc, found, err, want)
	}
}

// TestShieldInfo checks the info block's layout, which the SDK splits.
func TestShieldInfo(t *testing.T) {
	if got := shieldInfo(ShieldingSite{Local: true}); string(got) != "\x01\x00\x00" {
		t.Errorf("local: %q", got)
	}
	if got := shieldInfo(ShieldingSite{Unencrypted: "http://a/", Encrypted: "https://a/"}); string(got) != "\x00http://a/\x00https://a/\x00" {
		t.Errorf("remote: %q", got)
	}
}

// TestGeoRecord checks geolocation as Viceroy keys and defaults it: any
// spelling of an address matches, an IPv4-mapped address is not its IPv4
// one, and a loopback address the mapping lacks gets the default record
// unless use_default_loopback is false.
func TestGeoRecord(t *testing.T) {
	load := func(toml string) *Manifest {
		t.Helper()
		m, err := LoadManifest(writeFiles(t, map[string]string{"fastly.toml": toml}))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mapped := load("[local_server.geolocation]\nformat = \"inline-toml\"\n[local_server.geolocation.addresses.\"::FFFF:1.2.3.4\"]\ncity = \"Mapped\"\n[local_server.geolocation.addresses.\"2001:DB8:0::1\"]\ncity = \"Six\"")
	none := load("")
	off := load("[local_server.geolocation]\nuse_default_loopback = false")
	tests := []struct {
		name string
		m    *Manifest
		ip   string
		want string // the record's city; "" for none
	}{
		{"mapped address", mapped, "::ffff:1.2.3.4", "Mapped"},
		{"its IPv4 address", mapped, "1.2.3.4", ""},
		{"IPv6 in another spelling", mapped, "2001:db8::1", "Six"},
		{"default loopback", none, "127.0.0.9", "San Francisco"},
		{"default IPv6 loopback", none, "::1", "San Francisco"},
		{"IPv4-mapped loopback is not loopback", none, "::ffff:127.0.0.1", ""},
		{"not loopback", none, "10.0.0.1", ""},
		{"default loopback off", off, "127.0.0.1", ""},
	}
	for _, tc := range tests {
		rec, found := tc.m.geoRecord(netip.MustParseAddr(tc.ip))
		if city, _ := rec["city"].(string); city != tc.want || found != (tc.want != "") {
			t.Errorf("%s: %v %v, want %q", tc.name, rec, found, tc.want)
		}
	}
	for toml, want := range map[string]string{
		"[local_server.geolocation]\nuse_default_loopback = \"no\"":                                              "definition was not provided as a TOML table",
		"[local_server.geolocation]\nformat = \"inline-toml\"\naddresses = { \"not-an-ip\" = { city = \"x\" } }": "IP address not valid",
	} {
		if _, err := LoadManifest(writeFiles(t, map[string]string{"fastly.toml": toml})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", toml, err, want)
		}
	}
}
