package fastlyhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// ACL is one of fastly.toml's [local_server.acls]: IP prefixes and their
// actions, read from a JSON file in the format api.fastly.com takes
// ({"entries": [{"op": ..., "prefix": "1.2.3.0/24", "action": "BLOCK"}]}),
// as Viceroy reads it (src/acl.rs). Viceroy ignores op, and so does the
// host.
type ACL struct {
	Entries []ACLEntry
}

// ACLEntry is one prefix of an ACL, normalized as Viceroy normalizes it:
// the address masked to its prefix length.
type ACLEntry struct {
	Prefix netip.Prefix
	// Action is ALLOW or BLOCK, whatever their case in the file; any
	// other action reads Other(<action as written>), which is how
	// Viceroy reports it to the guest.
	Action string
}

// Lookup returns the entry matching ip with the longest prefix, the last
// such in the file when several have that length (Viceroy's Acl::lookup).
// An IPv4 address never matches an IPv6 prefix, nor the reverse, even an
// IPv4-mapped one.
func (a *ACL) Lookup(ip netip.Addr) (ACLEntry, bool) {
	var best ACLEntry
	found := false
	for _, e := range a.Entries {
		if e.Prefix.Contains(ip) && (!found || e.Prefix.Bits() >= best.Prefix.Bits()) {
			best, found = e, true
		}
	}
	return best, found
}

// acl reads one [local_server.acls] entry: a file name, or a table whose
// file key names it (src/config/acl.rs). Viceroy reads the file when it
// loads the manifest, so a broken file stops the load.
func (l *loader) acl(_, name string, v any) error {
	var file string
	switch v := v.(type) {
	case string:
		file = v
	case map[string]any:
		f, ok := v["file"].(string)
		if !ok {
			return fmt.Errorf("missing 'file' field")
		}
		file = f
	default:
		return fmt.Errorf("acl must be a TOML table or string")
	}
	b, err := os.ReadFile(l.path(file))
	if err != nil {
		return err
	}
	acl, err := parseACL(b)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if l.m.ACLs == nil {
		l.m.ACLs = map[string]*ACL{}
	}
	l.m.ACLs[name] = acl
	return nil
}

// parseACL decodes an ACL file as serde does Viceroy's Acl: field names
// are exact (Go's decoder would take "Entries" too), unknown fields such as
// op are ignored, and prefix and action are required strings.
func parseACL(b []byte) (*ACL, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	raw, ok := doc["entries"]
	if !ok {
		return nil, errors.New("missing field `entries`")
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil || rows == nil {
		return nil, errors.New("entries: invalid type, expected a sequence of objects")
	}
	acl := &ACL{Entries: make([]ACLEntry, 0, len(rows))}
	for i, row := range rows {
		var prefix, action string
		for _, f := range []struct {
			name string
			to   *string
		}{{"prefix", &prefix}, {"action", &action}} {
			raw, ok := row[f.name]
			if !ok {
				return nil, fmt.Errorf("entry %d: missing field `%s`", i, f.name)
			}
			if err := json.Unmarshal(raw, f.to); err != nil || string(raw) == "null" {
				return nil, fmt.Errorf("entry %d: %s: invalid type, expected a string", i, f.name)
			}
		}
		p, err := parseACLPrefix(prefix)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		acl.Entries = append(acl.Entries, ACLEntry{Prefix: p, Action: aclAction(action)})
	}
	return acl, nil
}

// parseACLPrefix reads IP/MASK as Viceroy's Prefix deserializer does, in
// its words: the mask must be in [1, 32] for IPv4 and [1, 128] for IPv6,
// and the address is masked to it ("1.2.3.4/8" is 1.0.0.0/8).
func parseACLPrefix(s string) (netip.Prefix, error) {
	ipText, maskText, ok := strings.Cut(s, "/")
	if !ok {
		return netip.Prefix{}, fmt.Errorf("invalid format '%s': want IP/MASK", s)
	}
	mask, err := parseRustU8(maskText)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid prefix %s: %w", maskText, err)
	}
	v6 := strings.Contains(ipText, ":")
	max := 32
	if v6 {
		max = 128
	}
	if mask < 1 || mask > max {
		return netip.Prefix{}, fmt.Errorf("mask outside allowed range [1, %d]: %d", max, mask)
	}
	ip, err := netip.ParseAddr(ipText)
	// Rust's address parsers take no zone, and read an address without a
	// colon as IPv4 only.
	if err != nil || ip.Zone() != "" || ip.Is6() != v6 {
		return netip.Prefix{}, fmt.Errorf("invalid ip address %s: invalid IP address syntax", ipText)
	}
	return netip.PrefixFrom(ip, mask).Masked(), nil
}

// parseRustU8 parses a u8 as Rust's str::parse does, with its messages: an
// optional leading +, decimal digits only.
func parseRustU8(s string) (int, error) {
	digits := strings.TrimPrefix(s, "+")
	if digits == "" {
		return 0, errors.New("cannot parse integer from empty string")
	}
	if strings.Trim(digits, "0123456789") != "" {
		return 0, errors.New("invalid digit found in string")
	}
	n, err := strconv.ParseUint(digits, 10, 8)
	if err != nil {
		return 0, errors.New("number too large to fit in target type")
	}
	return int(n), nil
}

// aclAction is an action as Viceroy reports it: ALLOW and BLOCK in any
// case are upper-cased, anything else is Other(action).
func aclAction(action string) string {
	switch up := strings.ToUpper(action); up {
	case "ALLOW", "BLOCK":
		return up
	}
	return "Other(" + action + ")"
}

// aclEntryJSON is a matching entry as fastly_acl.lookup returns it: the
// pretty-printed JSON of Viceroy's serde_json::to_vec_pretty.
func aclEntryJSON(e ACLEntry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(struct {
		Prefix string `json:"prefix"`
		Action string `json:"action"`
	}{e.Prefix.String(), e.Action})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// The ACL error codes of fastly_acl.lookup (acl_error in the witx).
const (
	aclErrOK        = 1
	aclErrNoContent = 2
)

func init() {
	register(map[string]hostcall{
		"fastly_acl.open": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			name, ok := read(m, a[0], a[1])
			if !ok {
				return stInval
			}
			acl, found := s.host.manifest.ACLs[string(name)]
			if !found {
				return stNone
			}
			return write32(m, a[2], put(s, acl))
		},
		"fastly_acl.lookup": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			acl, ok := lookup[*ACL](s, a[0])
			if !ok {
				return stBadf
			}
			octets, ok := read(m, a[1], a[2])
			if !ok {
				return stInval
			}
			ip, ok := netip.AddrFromSlice(octets)
			if !ok {
				return stInval
			}
			e, found := acl.Lookup(ip)
			if !found {
				// No match is a lookup that succeeded with an ACL error,
				// and no body.
				return write32(m, a[4], aclErrNoContent)
			}
			doc, err := aclEntryJSON(e)
			if err != nil {
				return stError
			}
			h := s.handle()
			b := newBody()
			b.buf.Write(doc)
			s.bodies[h] = b
			return both(write32(m, a[3], h), write32(m, a[4], aclErrOK))
		},
	})
}
