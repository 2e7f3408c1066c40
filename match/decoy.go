package match

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Decoy is an operator's rules for clients to send to a room's decoy line
// (see queue's Decoy): a queue page that looks real and never admits,
// which a misjudged visitor leaves by doing the room's hardest proof of
// work. A room embeds one (its JSON fields are the room's). Compile it
// before use.
type Decoy struct {
	// IPs are client addresses and CIDR ranges, as Bypass.IPs.
	IPs []string `json:"decoy_ips"`
	// ACL names a Fastly ACL for long lists: a client whose entry's action
	// is BLOCK (in any case) is decoyed. Its other entries decoy nobody.
	ACL string `json:"decoy_acl"`

	compiled bool
	ips      []netip.Prefix
}

// Compile checks the rules and prepares them for Match. Each error starts
// with the field it is about.
func (d *Decoy) Compile() error {
	d.compiled = false
	var err error
	if d.ips, err = compileIPs("decoy_ips", "decoy_acl", d.IPs); err != nil {
		return err
	}
	if d.ACL != "" {
		if err := checkStoreName(d.ACL); err != nil {
			return fmt.Errorf("decoy_acl: %q %v", d.ACL, err)
		}
	}
	d.compiled = true
	return nil
}

// Any reports whether d has a rule.
func (d *Decoy) Any() bool { return len(d.IPs) > 0 || d.ACL != "" }

// Match reports the rule that sends req's client to the decoy ("ip",
// "acl:<name>"). An error comes only from Facts (the ACL lookup), and the
// rule is then taken as not matching: a fault decoys nobody.
func (d *Decoy) Match(req *Request) (rule string, ok bool, err error) {
	if !d.compiled {
		return "", false, errors.New("match: Decoy.Match before Compile")
	}
	if ip, known := req.ip(); known {
		for _, p := range d.ips {
			if p.Contains(ip) {
				return "ip", true, nil
			}
		}
	}
	if d.ACL == "" {
		return "", false, nil
	}
	action, err := req.acl(d.ACL)
	if err != nil {
		return "", false, fmt.Errorf("decoy_acl %q: %w", d.ACL, err)
	}
	if strings.EqualFold(action, "BLOCK") {
		return "acl:" + d.ACL, true, nil
	}
	return "", false, nil
}
